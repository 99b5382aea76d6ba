"""Talks to org.kernel.TCMUService1 the way targetcli-fb does (ui_backstore.py).

Two clients, because targetcli has used both:
  dbus-python (targetcli-fb <= 2.1.54, e.g. Debian bookworm): dbus.Interface
    proxies, which introspect the object to learn the method signatures;
  Gio (current targetcli-fb): Gio.DBusProxy with flags NONE, which loads the
    properties with org.freedesktop.DBus.Properties.GetAll, and calls with
    explicit signatures ('(s)', '(sts)').
Usage: targetcli_client.py ADDRESS; prints one JSON object per client.
"""
import json
import sys

ADDR = sys.argv[1]
NAME = "org.kernel.TCMUService1"
ROOT = "/org/kernel/TCMUService1"
CONFIGS = {"vtape": "size=1G", "vdisk": "size=huge"}


def with_dbus_python():
    import dbus

    bus = dbus.bus.BusConnection(ADDR)
    mgr = dbus.Interface(bus.get_object(NAME, ROOT), "org.freedesktop.DBus.ObjectManager")
    out = {}
    for k, v in mgr.GetManagedObjects().items():
        iface = dbus.Interface(bus.get_object(NAME, k), dbus_interface=NAME)
        name = str(k[k.rfind("/") + 1:])
        ok, msg = iface.CheckConfig(name + "/" + CONFIGS[name])
        # A plain int for the size: dbus-python finds 't' by introspection.
        rc, err = iface.ChangeMedium("dev0", 1 << 30, name + "/size=1G")
        out[name] = {
            "desc": str(v.get(NAME, {}).get("ConfigDesc", "No description.")),
            "check": [bool(ok), str(msg)],
            "change": [int(rc), str(err)],
        }
    return out


def with_gio():
    from gi.repository import Gio

    flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
    bus = Gio.DBusConnection.new_for_address_sync(ADDR, flags, None, None)
    mgr = Gio.DBusProxy.new_sync(bus, Gio.DBusProxyFlags.NONE, None, NAME, ROOT, "org.freedesktop.DBus.ObjectManager", None)
    out = {}
    for k, v in mgr.GetManagedObjects().items():
        iface = Gio.DBusProxy.new_sync(bus, Gio.DBusProxyFlags.NONE, None, NAME, k, NAME, None)
        name = k[k.rfind("/") + 1:]
        ok, msg = iface.CheckConfig("(s)", name + "/" + CONFIGS[name])
        rc, err = iface.ChangeMedium("(sts)", "dev0", 1 << 30, name + "/size=1G")
        cached = iface.get_cached_property("ConfigDesc")
        out[name] = {
            "desc": v.get(NAME, {}).get("ConfigDesc", "No description."),
            "cached_desc": cached.unpack() if cached is not None else None,
            "check": [ok, msg],
            "change": [rc, err],
        }
    return out


print(json.dumps({"dbus-python": with_dbus_python(), "gio": with_gio()}, sort_keys=True))
