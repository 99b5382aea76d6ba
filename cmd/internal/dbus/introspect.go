package dbus

import (
	"encoding/xml"
	"strings"

	"github.com/godbus/dbus/v5/introspect"
)

// Introspection data, as org.freedesktop.DBus.Introspectable returns it.
// The org.kernel.TCMUService1 interface follows tcmu-runner's
// tcmu-handler.xml (argument names included); ChangeMedium is targetcli's
// (commit 7d4f82e "Add support for media change").

var (
	introspectableData = introspect.Interface{
		Name:    ifaceIntrospect,
		Methods: []introspect.Method{{Name: "Introspect", Args: []introspect.Arg{{Name: "xml_data", Type: "s", Direction: "out"}}}},
	}
	peerData = introspect.Interface{
		Name: ifacePeer,
		Methods: []introspect.Method{
			{Name: "Ping"},
			{Name: "GetMachineId", Args: []introspect.Arg{{Name: "machine_uuid", Type: "s", Direction: "out"}}},
		},
	}
	propertiesData = introspect.Interface{
		Name: ifaceProperties,
		Methods: []introspect.Method{
			{Name: "Get", Args: []introspect.Arg{
				{Name: "interface_name", Type: "s", Direction: "in"},
				{Name: "property_name", Type: "s", Direction: "in"},
				{Name: "value", Type: "v", Direction: "out"},
			}},
			{Name: "GetAll", Args: []introspect.Arg{
				{Name: "interface_name", Type: "s", Direction: "in"},
				{Name: "properties", Type: "a{sv}", Direction: "out"},
			}},
			{Name: "Set", Args: []introspect.Arg{
				{Name: "interface_name", Type: "s", Direction: "in"},
				{Name: "property_name", Type: "s", Direction: "in"},
				{Name: "value", Type: "v", Direction: "in"},
			}},
		},
		Signals: []introspect.Signal{{Name: "PropertiesChanged", Args: []introspect.Arg{
			{Name: "interface_name", Type: "s"},
			{Name: "changed_properties", Type: "a{sv}"},
			{Name: "invalidated_properties", Type: "as"},
		}}},
	}
	objectManagerData = introspect.Interface{
		Name: ifaceObjectManager,
		Methods: []introspect.Method{{Name: "GetManagedObjects", Args: []introspect.Arg{
			{Name: "object_paths_interfaces_and_properties", Type: "a{oa{sa{sv}}}", Direction: "out"},
		}}},
		Signals: []introspect.Signal{
			{Name: "InterfacesAdded", Args: []introspect.Arg{
				{Name: "object_path", Type: "o"},
				{Name: "interfaces_and_properties", Type: "a{sa{sv}}"},
			}},
			{Name: "InterfacesRemoved", Args: []introspect.Arg{
				{Name: "object_path", Type: "o"},
				{Name: "interfaces", Type: "as"},
			}},
		},
	}
	tcmuServiceData = introspect.Interface{
		Name: Interface,
		Methods: []introspect.Method{
			{Name: "CheckConfig", Args: []introspect.Arg{
				{Name: "configstr", Type: "s", Direction: "in"},
				{Name: "is_valid", Type: "b", Direction: "out"},
				{Name: "message", Type: "s", Direction: "out"},
			}},
			{Name: "ChangeMedium", Args: []introspect.Arg{
				{Name: "name", Type: "s", Direction: "in"},
				{Name: "size", Type: "t", Direction: "in"},
				{Name: "configstr", Type: "s", Direction: "in"},
				{Name: "ret", Type: "i", Direction: "out"},
				{Name: "message", Type: "s", Direction: "out"},
			}},
		},
		Properties: []introspect.Property{{
			Name: propConfigDesc, Type: "s", Access: "read",
			// It never changes, so no PropertiesChanged is ever sent.
			Annotations: []introspect.Annotation{{Name: "org.freedesktop.DBus.Property.EmitsChangedSignal", Value: "const"}},
		}},
	}
)

// handlerIntrospection describes every handler object.
var handlerIntrospection = marshalNode(introspect.Node{
	Interfaces: []introspect.Interface{introspectableData, peerData, propertiesData, tcmuServiceData},
})

// rootIntrospection describes RootPath: the ObjectManager and its children.
func (s *Service) rootIntrospection() string {
	n := introspect.Node{Interfaces: []introspect.Interface{introspectableData, peerData, objectManagerData}}
	for _, st := range sortedSubtypes(s.handlers) {
		n.Children = append(n.Children, introspect.Node{Name: st})
	}
	if s.hasHandlerManagerObjects() {
		n.Children = append(n.Children, introspect.Node{Name: "HandlerManager1"})
	}
	return marshalNode(n)
}

func marshalNode(n introspect.Node) string {
	b, err := xml.MarshalIndent(n, "", "  ")
	if err != nil {
		panic("dbus: introspection data does not marshal: " + err.Error()) // static data: a programming error
	}
	return strings.TrimSpace(introspect.IntrospectDeclarationString) + "\n" + string(b) + "\n"
}
