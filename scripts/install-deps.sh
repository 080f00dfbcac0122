#!/bin/sh
# Install the Debian packages stvm needs that are missing, and nothing else: no system
# setting is changed. As root it installs them; otherwise it prints the exact command
# to run. Packages: build-essential, the Criterion test framework, libffi (FFI),
# gnuplot (the plots), pkg-config (the install check), nginx and wrk (the HTTP
# experiment: bench/nginx.c starts its own nginx as the current user, wrk is the
# baseline), clang and libclang-rt-14-dev (libFuzzer, libclang_rt.fuzzer-x86_64.a: the
# fuzz targets, mk/fuzz.mk), libuv1-dev and curl (examples/libuv_host.c and its check,
# scripts/libuv-host-check.sh). STVM_DEPS_EXTRA may name more.
#
# Installing a package that ships a service (nginx) would start that service through
# invoke-rc.d. A build never changes services, so while packages are installed Debian's
# /usr/sbin/policy-rc.d must answer 101 ("action forbidden"): if there is none, this
# script puts one there for the duration of the install and removes it afterwards; if
# there is one that would let nginx start, it refuses to install.
set -eu
want="build-essential libcriterion-dev libffi-dev gnuplot-nox pkg-config nginx wrk clang"
want="$want libclang-rt-14-dev libuv1-dev curl ${STVM_DEPS_EXTRA:-}"
missing=""
for p in $want; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -n "$missing" ] || exit 0
policy=/usr/sbin/policy-rc.d
if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing packages:$missing"
    echo "install-deps: run as root:  sh scripts/install-deps.sh  (apt-get, with no service started)"
    exit 1
fi

made_policy=no
remove_policy() {
    if [ "$made_policy" = yes ]; then
        rm -f "$policy"
        made_policy=no
        echo "install-deps: removed the temporary $policy"
    fi
}
trap remove_policy EXIT
trap 'remove_policy; exit 130' INT
trap 'remove_policy; exit 143' TERM
trap 'remove_policy; exit 129' HUP

if [ -e "$policy" ]; then
    # invoke-rc.d asks it "<service> <action>"; 101 means the action is forbidden.
    answer=0
    "$policy" nginx start >/dev/null 2>&1 || answer=$?
    if [ "$answer" != 101 ]; then
        echo "install-deps: $policy answers $answer (not 101) to 'nginx start', so installing"
        echo "install-deps: would start services (nginx's), which a build must not do."
        echo "install-deps: not installing:$missing"
        exit 1
    fi
    echo "install-deps: $policy (already present) answers 101: packages will not start services"
else
    printf '#!/bin/sh\n# stvm install-deps: no service starts during the install\nexit 101\n' > "$policy"
    chmod 755 "$policy"
    made_policy=yes
    echo "install-deps: wrote a temporary $policy answering 101, so packages start no service"
fi

echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
remove_policy
case " $missing " in
*" nginx "*)
    echo "install-deps: note: Debian's nginx package enables nginx.service (and its rc.d"
    echo "install-deps: links) for the next boot; policy-rc.d only kept it from starting now."
    echo "install-deps: stvm never uses that service: bench/nginx.c starts its own nginx." ;;
esac
