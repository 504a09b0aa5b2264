package dataplane_test

// Differential cases of the dumps and replies vppsvc's driver reads: the
// fields VPP fills in, one by one.

import (
	"testing"

	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/binapi/vpe"
)

func TestDiffDump(t *testing.T) {
	runDifferential(t, "dump/version", func(d *diffCase) {
		// The driver checks the version; build date and directory differ
		// by nature.
		v, err := vpe.NewServiceClient(d.Conn).ShowVersion(d.Ctx, &vpe.ShowVersion{})
		d.Retval("show_version", err)
		d.RecordExcept("show_version reply", v, "BuildDate", "BuildDirectory")
		p, err := memclnt.NewServiceClient(d.Conn).ControlPing(d.Ctx, &memclnt.ControlPing{})
		d.Retval("control_ping", err)
		d.Record("control_ping vpe_pid set", p.VpePID != 0)
	})
}
