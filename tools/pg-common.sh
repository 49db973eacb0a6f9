# Sourced by tools/pg-cluster and tools/pg-ha (bash): what both need to run PostgreSQL's
# processes as their owner in a private directory. The sourcing script sets DIR (an absolute
# path) and defines log and die.

RUN_AS=${PG_CLUSTER_USER:-postgres}

# Runs a command as the cluster owner: ourselves, or RUN_AS when we are root (PostgreSQL refuses
# to run as root). From /, since our working directory may be one RUN_AS cannot enter (every
# path we pass is absolute).
as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    (cd / && runuser -u "$RUN_AS" -- "$@")
  else
    "$@"
  fi
}

# DIR, made if missing, 0700 and (as root) handed to RUN_AS, who must be able to reach it.
prepare_dir() {
  mkdir -p "$DIR"
  if [[ $(id -u) -eq 0 ]]; then
    chown "$RUN_AS": "$DIR"
  fi
  chmod 700 "$DIR"
  as_owner test -w "$DIR" -a -x "$DIR" \
    || die "$DIR is not reachable by $(if [[ $(id -u) -eq 0 ]]; then echo "$RUN_AS"; else id -un; fi) (check the parent directories' permissions)"
}

# DIR/pgpass as a URI query value: every byte but [A-Za-z0-9/._~-] percent-encoded.
passfile_param() {
  local path=$DIR/pgpass out="" c i
  for ((i = 0; i < ${#path}; i++)); do
    c=${path:i:1}
    case $c in
      [A-Za-z0-9/._~-]) out+=$c ;;
      *) out+=$(printf '%%%02X' "'$c") ;;
    esac
  done
  echo "$out"
}

# Whether process $1 exists and is no zombie.
alive() {
  local state
  [[ $1 =~ ^[0-9]+$ ]] || return 1
  # The state follows the command name, which is in parentheses and may hold spaces.
  state=$(sed -n 's/^.*) \([A-Za-z]\) .*$/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z ]]
}
