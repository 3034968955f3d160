# Shared by the shell tests of the command line (source it after setting kcx and work):
# check NAME EXPECTED_EXIT COMMAND... runs a command and compares its exit status;
# contains NAME FILE TEXT looks for TEXT in FILE; both count into pass/fail, and
# finish prints the tally and exits 1 on any failure.
py=/usr/bin/python3
pass=0; fail=0
check() {  # check NAME EXPECTED_EXIT COMMAND...
  local name="$1" want="$2"; shift 2
  "$@" >out.txt 2>err.txt; local got=$?
  if [ "$got" = "$want" ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $name: exit $got, expected $want"; cat err.txt; fi
}
contains() {  # contains NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $1: '$3' not in $2:"; cat "$2"; fi
}
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit $?
}
