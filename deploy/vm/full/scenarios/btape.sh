# vm-timeout: 3600
# vm-test-all: no
# btape: the backup software's own tape tests: Bacula's btape test on a
# drive of each family (guest/btape.sh), Amanda's amtapetype on
# compression (guest/amtapetype.sh); make vm-btape. The recordings go out
# on ttyS2.
# shellcheck source=../guest/btape.sh
. "$VMTEST_DIR/btape.sh"
# shellcheck source=../guest/amtapetype.sh
. "$VMTEST_DIR/amtapetype.sh"
btape_run
amtapetype_run
serial_out recordings recordings-out
