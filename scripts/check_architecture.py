#!/usr/bin/env python3
"""The layering of docs/architecture.md, checked: run by CTest as `architecture`.

- core/ and ui/ keep every source in a subsystem folder (only CMakeLists.txt at the top);
- every .cpp of a subsystem folder is listed in that folder's CMakeLists.txt;
- core/ includes no Qt header;
- a subsystem includes only the subsystems the table below allows (core never includes
  ui/ or app/, ui never includes app/).
Prints each breach as FILE:LINE: what is wrong, and exits 1 when there is any.
"""
import os
import re
import sys

# Who may include whom, besides itself. The order is the order of the layers.
CORE = {
    'base': [],
    'formats': ['base'],
    'metrics': ['base', 'formats'],
    'demo': ['base', 'formats'],
    'contract': ['base', 'formats', 'metrics'],
    'heatmap': ['base', 'formats', 'metrics'],
    'summary': ['base', 'formats', 'metrics'],
    'evaluate': ['base', 'formats', 'metrics', 'contract', 'summary'],
    'discover': ['base', 'formats', 'metrics', 'contract', 'evaluate', 'summary'],
    'signoff': ['base', 'formats', 'metrics', 'contract', 'evaluate', 'summary'],
    'steps': ['base', 'formats', 'metrics', 'contract', 'evaluate', 'summary', 'discover'],
    'corrections': ['base', 'formats', 'metrics'],
}
VIEWS = ['session', 'style']
UI = {
    'session': [],
    'style': ['session'],
    'contract': VIEWS,
    'heatmap': VIEWS,
    'charts': VIEWS,
    'drilldown': VIEWS,
    'signoff': VIEWS,
    'discover': VIEWS,
    'summary': VIEWS + ['heatmap'],
    'steps': VIEWS,
    'compare': VIEWS,
    'report': VIEWS + ['contract', 'heatmap', 'charts', 'signoff'],
    'window': VIEWS + ['contract', 'heatmap', 'charts', 'drilldown', 'signoff', 'discover', 'summary', 'steps', 'compare', 'report'],
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def main(root):
    problems = []
    for top, table in (('core', CORE), ('ui', UI)):
        for name in sorted(os.listdir(os.path.join(root, top))):
            path = os.path.join(root, top, name)
            if os.path.isfile(path) and name != 'CMakeLists.txt':
                problems.append(f'{top}/{name}:1: a source loose at the top of {top}/ (put it in a subsystem folder)')
            if os.path.isdir(path) and name not in table:
                problems.append(f'{top}/{name}:1: a folder docs/architecture.md and this check do not know')
        for part, allowed in table.items():
            folder = os.path.join(root, top, part)
            if not os.path.isdir(folder):
                problems.append(f'{top}/{part}:1: the folder is missing')
                continue
            listed = open(os.path.join(folder, 'CMakeLists.txt')).read()
            for name in sorted(os.listdir(folder)):
                rel = f'{top}/{part}/{name}'
                if name.endswith('.cpp') and not re.search(r'(^|\s)' + re.escape(name) + r'(\s|\))', listed):
                    problems.append(f'{rel}:1: not listed in {top}/{part}/CMakeLists.txt')
                if not name.endswith(('.h', '.cpp')):
                    continue
                for n, line in enumerate(open(os.path.join(folder, name), encoding='utf-8'), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    header = m.group(2)
                    if top == 'core' and re.match(r'Q[A-Za-z]|qt', header):
                        problems.append(f'{rel}:{n}: core/ includes the Qt header {header}')
                    parts = header.split('/')
                    if len(parts) < 3 or parts[0] not in ('core', 'ui', 'app'):
                        continue
                    if parts[0] == 'app' or (top == 'core' and parts[0] == 'ui'):
                        problems.append(f'{rel}:{n}: {top}/ includes {header} from a layer above it')
                    elif parts[0] == top and parts[1] != part and parts[1] not in allowed:
                        problems.append(f'{rel}:{n}: {top}/{part} may not include {header} '
                                        f'(it may include {", ".join(allowed) or "nothing else"})')
    for p in problems:
        print(p)
    print(f'architecture: {len(problems)} problem(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')))
