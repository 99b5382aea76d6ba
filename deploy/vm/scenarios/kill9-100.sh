# vm-timeout: 3000
# vm-test-all: no
# kill9-100: the kill9 scenario with 100 kills (make vm-kill9; about
# 20 min, so not part of make test, which runs kill9's 10).
KILL9_KILLS=100
. /vmtest/scenarios/kill9.sh
