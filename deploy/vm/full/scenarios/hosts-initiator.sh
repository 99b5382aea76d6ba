# vm-timeout: 1500
# vm-test-all: no
# hosts-initiator: the initiator guest of the two-host scenario
# (guest/hosts.sh; vmtest.addr=A/N is this guest's address, vmtest.peer=A
# the target's).
hosts_initiator_run "$hosts_addr"
