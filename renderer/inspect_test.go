package renderer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// TestServiceKeys: each service lists the items it wins; a claim two
// services want is listed under the smallest ID only, and moves to the
// other one when the winner goes.
func TestServiceKeys(t *testing.T) {
	core, _ := toyCore(t, 1)
	must(t, core.Resync(&model.ResyncEventData{FrontendIfs: model.NewInterfaces("tap0")}))
	a := toySvc("a", "10.96.0.1", "10.1.1.1:80", "10.1.1.2:80")
	b := toySvc("b", "10.96.0.1", "10.1.1.3:80")
	c := toySvc("c", "10.96.0.3")
	for _, s := range []*model.ContivService{a, b, c} {
		must(t, core.AddService(s))
	}
	lbKey := vppcfg.Key{Kind: vppcfg.KindNAT44LBMapping, Name: "10.96.0.1:80/tcp"}
	assert.Equal(t, map[model.ServiceID][]vppcfg.Key{a.ID: {lbKey}}, core.ServiceKeys(),
		"c has only filter rules, which live in a shard ACL of no single service")

	must(t, core.DeleteService(a))
	staticKey := vppcfg.Key{Kind: vppcfg.KindNAT44StaticMapping, Name: "10.96.0.1:80/tcp"}
	assert.Equal(t, map[model.ServiceID][]vppcfg.Key{b.ID: {staticKey}}, core.ServiceKeys())
}
