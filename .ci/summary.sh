# Sourced by .ci/run (bash, set -euo pipefail): records what each suite came to and prints it as the
# run's last line from an EXIT trap, so a run that fails half way still says what ran, what failed
# and what never started. A skip is recorded with its reason: none is silent.
#
#   ci_plan NAME...        the suites in the order the run means to start them (unstarted: "not run")
#   ci_suite NAME CMD...   runs CMD as suite NAME; "ran", or "failed (exit N)" when it ends the run
#   ci_step NAME CMD...    a check (lint, types...): named in the summary only if it fails
#   ci_skip NAME REASON    NAME did not run, and why
#   ci_ensure NAME SCRIPT  runs a script that makes NAME's tools work: exit 0 → true; exit 1 → NAME
#                          skipped with the reason the script printed last on stderr, and false;
#                          any other exit (the tool installed but could not start) fails the run

ci_planned=()
ci_order=()
declare -A ci_outcome=()
ci_current=''
ci_current_why=''

ci_plan() { ci_planned+=("$@"); }

ci_record() {
  [ -n "${ci_outcome[$1]+set}" ] || ci_order+=("$1")
  ci_outcome[$1]=$2
}

ci_suite() {
  local name=$1
  shift
  ci_current=$name
  "$@"
  ci_record "$name" ran
  ci_current=''
}

ci_step() {
  local name=$1
  shift
  ci_current=$name
  "$@"
  ci_current=''
}

ci_skip() {
  echo "$1 skipped: $2"
  ci_record "$1" "skipped ($2)"
}

ci_ensure() {
  local name=$1 script=$2 rc=0 err why
  err=$(mktemp)
  bash "$script" 2>"$err" || rc=$?
  cat "$err" >&2
  why=$(grep -v '^$' "$err" | tail -n 1 || true)
  rm -f "$err"
  why=${why#*: } # the script's "name: " prefix
  case $rc in
    0) return 0 ;;
    1)
      ci_skip "$name" "${why:-$script gave no reason}"
      return 1
      ;;
    *)
      ci_current=$name
      ci_current_why=${why:-$script gave no reason}
      exit "$rc"
      ;;
  esac
}

ci_summary() {
  local rc=$? entries=() name
  if [ -n "$ci_current" ]; then
    ci_record "$ci_current" "failed (exit $rc${ci_current_why:+: $ci_current_why})"
  elif [ "$rc" -ne 0 ]; then
    ci_record "the run" "failed (exit $rc) outside any suite"
  fi
  for name in "${ci_order[@]}"; do
    entries+=("$name ${ci_outcome[$name]}")
  done
  for name in "${ci_planned[@]}"; do
    [ -n "${ci_outcome[$name]+set}" ] || entries+=("$name not run")
  done
  local line
  line=$(printf '%s; ' "${entries[@]}")
  echo "suites: ${line%; }"
  return "$rc"
}

trap ci_summary EXIT
# A signal ends the run through the EXIT trap too: bash skips that trap on a signal it does not trap.
trap 'exit 130' INT
trap 'exit 143' TERM
