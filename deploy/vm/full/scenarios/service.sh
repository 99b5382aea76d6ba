# vm-timeout: 60
# vm-test-all: no
# service: vscsid.service reached READY (Type=notify): active, not
# activating. vmtest runs it first in every boot of the full guest.
expect_eq service-active active "$(systemctl is-active vscsid)"
note "$(systemctl status vscsid --no-pager 2>&1 | head -n 12)"
