#!/usr/bin/env python3
"""The layering of docs/architecture.md, checked: run by CTest as `architecture`.

- core/ and ui/ keep every source in a subsystem folder (only CMakeLists.txt at the top);
- every .cpp of a subsystem folder is listed in that folder's CMakeLists.txt;
- core/ includes no Qt header;
- no two .cpp files of one library define the same file-local type, constant or function
  (a unity build compiles them together);
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
    'corrections': VIEWS,
    'report': VIEWS + ['contract', 'heatmap', 'charts', 'signoff'],
    'window': VIEWS + ['contract', 'heatmap', 'charts', 'drilldown', 'signoff', 'discover', 'summary', 'steps', 'compare', 'corrections', 'report'],
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


# File-local names a unity build can put side by side: types and constants defined at the top
# level of an anonymous namespace (or `static`) in two .cpp files of one library, and
# functions with the same parameters. Which files share a unity batch changes whenever a
# source is added, so any such pair will break a fresh clone's build some day (kChunk, num,
# Reader and Outcome did).
LOCAL_TYPE = re.compile(r'^(?:struct|class|enum class|enum|union)\s+(\w+)\b(?!;)|^using\s+(\w+)\s*=')
LOCAL_CONST = re.compile(r'^(?:static\s+)?(?:inline\s+)?(?:constexpr|const)\s+[\w:<>, ]+?\s+(\w+)\s*(?:=|\[|\{)')
LOCAL_FUNC = re.compile(r'^(?:static\s+)?(?:inline\s+)?[\w:<>,\*& ]+?[\s\*&](\w+)\s*(\([^)]*\))\s*(?:const\s*)?\{?\s*$')


def unity_clashes(root, top):
    seen = {}
    problems = []
    for dirpath, _, files in sorted(os.walk(os.path.join(root, top))):
        for name in sorted(files):
            if not name.endswith('.cpp'):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            local = False
            for n, line in enumerate(open(path, encoding='utf-8'), 1):
                if re.match(r'^namespace\s*\{', line):
                    local = True
                    continue
                if local and re.match(r'^\}\s*//\s*namespace\s*$', line):
                    local = False
                    continue
                if not (local or line.startswith('static ')) or line[:1].isspace():
                    continue
                key = None
                m = LOCAL_TYPE.match(line) or LOCAL_CONST.match(line)
                if m:
                    key = next(g for g in m.groups() if g)
                else:
                    m = LOCAL_FUNC.match(line)
                    if m and m.group(1) not in ('if', 'for', 'while', 'switch', 'return'):
                        key = m.group(1) + re.sub(r'\s+\w+\s*(,|\))', r'\1', m.group(2))
                if not key:
                    continue
                if key in seen and seen[key][0] != rel:
                    problems.append(f'{rel}:{n}: file-local {key.split("(")[0]!r} is also defined at {seen[key][0]}:'
                                    f'{seen[key][1]}; a unity build may compile them together (rename one)')
                seen.setdefault(key, (rel, n))
    return problems


def main(root):
    problems = []
    for top in ('core', 'ui', 'app'):
        problems += unity_clashes(root, top)
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
