package main

import (
	"context"
	"fmt"
	"sync"

	godbus "github.com/godbus/dbus/v5"
	"go.uber.org/zap"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/cmd/internal/dbus"
)

// logger is the one logger type, named for brevity in signatures.
type logger = *zap.Logger

// dbusHandlers describes our subtypes for targetcli: ConfigDesc, the strict
// cfgstring grammar check (targetcli gives the size apart, so a vdisk
// cfgstring needs no size=), and changemedium for tape drives.
func dbusHandlers(d *daemon) []dbus.Handler {
	var out []dbus.Handler
	for _, name := range config.TypeNames() {
		k, _ := config.KindOf(name)
		h := dbus.Handler{
			Subtype:     name,
			ConfigDesc:  k.Desc,
			CheckConfig: k.Grammar,
		}
		if k.MediumBarcode != nil {
			h.ChangeMedium = func(dev string, _ uint64, cfg string) error {
				barcode, err := k.MediumBarcode(cfg)
				if err != nil {
					return err
				}
				return d.changeMedium(dev, barcode, "targetcli changemedium")
			}
		}
		out = append(out, h)
	}
	return out
}

// startDBus announces our handlers to targetcli on the system bus. With
// mode "auto" a missing bus or a refused name is logged and the daemon
// carries on; with "on" it is an error. It returns a function that
// withdraws them.
func startDBus(ctx context.Context, mode string, d *daemon, log logger) (func(), error) {
	nop := func() {}
	if mode == "off" {
		return nop, nil
	}
	conn, err := godbus.ConnectSystemBus()
	if err != nil {
		if mode == "on" {
			return nop, fmt.Errorf("--dbus=on: connect to the system bus: %w", err)
		}
		log.Info("no system D-Bus: targetcli will not list user:vtape and user:vdisk (devices made with targetcli are still served)", zap.Error(err))
		return nop, nil
	}
	svc, err := dbus.New(ctx, conn, dbusHandlers(d), log)
	if err != nil {
		_ = conn.Close() // best effort: err is the error to report
		if mode == "on" {
			return nop, fmt.Errorf("--dbus=on: %w", err)
		}
		log.Warn("cannot serve targetcli on D-Bus (is deploy/dbus/org.kernel.TCMUService1.conf installed?)", zap.Error(err))
		return nop, nil
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if err := svc.Close(); err != nil {
				log.Warn("D-Bus teardown", zap.Error(err))
			}
			if err := conn.Close(); err != nil {
				log.Warn("D-Bus close", zap.Error(err))
			}
		})
	}, nil
}
