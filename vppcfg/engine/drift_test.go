package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

func TestCompareWithVPP(t *testing.T) {
	web := lb("10.96.0.10:80", "10.1.1.2:8080", "10.1.1.3:8080")
	db := lb("10.96.0.11:5432", "10.1.1.4:5432", "10.1.1.5:5432")
	db.Label = "db"
	bind := binding("tap9", vppcfg.ACLInput, "a-filter", 1)
	desired := []OwnedItem{
		{Key: web.Key(), Item: web, Owners: []string{"a"}},
		{Key: db.Key(), Item: db, Owners: []string{"a"}},
		{Key: bind.Key(), Item: bind, Owners: []string{"a"}},
	}
	tagged := func(it vppcfg.Item, owner string) driverapi.Observed {
		return driverapi.Observed{Item: it, Tag: core.Tag(owner, core.ItemLabel(it))}
	}
	webMoved := lb("10.96.0.10:80", "10.1.1.2:8080", "10.1.1.7:8080")
	stale := lb("10.96.0.12:80", "10.1.1.8:80", "10.1.1.9:80")
	stale.Label = "gone"
	foreign := lb("10.96.0.13:80", "10.1.1.8:80", "10.1.1.9:80")

	for _, tc := range []struct {
		name                          string
		objects                       []driverapi.Observed
		missing, extra, changed       []string
		inSync                        int
		changedFields, missingReasons []string
	}{
		{
			name:    "in sync apart from the binding of an absent interface",
			objects: []driverapi.Observed{tagged(web, "a"), tagged(db, "a"), {Item: foreign, Tag: "other:x"}},
			missing: []string{bind.Key().String()}, inSync: 2,
			missingReasons: []string{"interface tap9 does not exist in VPP"},
		},
		{
			name:           "a mapping deleted, one changed and one left by a deleted service",
			objects:        []driverapi.Observed{tagged(webMoved, "a"), tagged(stale, "a")},
			missing:        []string{db.Key().String(), bind.Key().String()},
			extra:          []string{stale.Key().String()},
			changed:        []string{web.Key().String()},
			changedFields:  []string{"Locals: [10.1.1.3:8080:10@vrf0] / [10.1.1.7:8080:10@vrf0]"},
			missingReasons: []string{"", "interface tap9 does not exist in VPP"},
		},
		{
			name:           "an object of another control plane at a desired identity",
			objects:        []driverapi.Observed{tagged(web, "a"), {Item: db, Tag: "other:db"}},
			missing:        []string{db.Key().String(), bind.Key().String()},
			inSync:         1,
			missingReasons: []string{"VPP holds an object of another control plane there: " + db.String(), "interface tap9 does not exist in VPP"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &driverapi.State{Interfaces: map[string]uint32{"eth0": 1}, Objects: tc.objects}
			d := CompareWithVPP(desired, st, nil)
			keys := func(items []DriftItem) (out []string) {
				for _, it := range items {
					out = append(out, it.Key.String())
				}
				return out
			}
			assert.Equal(t, tc.missing, keys(d.Missing))
			assert.Equal(t, tc.extra, keys(d.Extra))
			var changed, fields, reasons []string
			for _, c := range d.Changed {
				changed = append(changed, c.Key.String())
				for _, f := range c.Fields {
					fields = append(fields, f.Field+": "+f.Desired+" / "+f.Observed)
				}
			}
			for _, m := range d.Missing {
				reasons = append(reasons, m.Reason)
			}
			assert.Equal(t, tc.changed, changed)
			assert.Equal(t, tc.changedFields, fields)
			assert.Equal(t, tc.missingReasons, reasons)
			assert.Equal(t, tc.inSync, d.InSync)
			assert.Equal(t, len(tc.missing)+len(tc.extra)+len(tc.changed) == 0, d.Empty())
			for _, e := range d.Extra {
				require.Equal(t, "a", e.Owner)
			}
		})
	}
}

func TestCompareWithVPPSkipsUnobservableKinds(t *testing.T) {
	cfg := &vppcfg.CNATSnatConfig{}
	d := CompareWithVPP([]OwnedItem{{Key: cfg.Key(), Item: cfg, Owners: []string{"a"}}},
		&driverapi.State{Unobservable: map[vppcfg.Kind]bool{vppcfg.KindCNATSnatConfig: true}}, nil)
	assert.True(t, d.Empty())
	assert.Equal(t, 1, d.Unverifiable)
}
