package govppdriver

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// named tells whether k is one of vppcfg's Kind constants: only those have
// a name; any other value prints as kind-<n>.
func named(k vppcfg.Kind) bool { return k.String() != fmt.Sprintf("kind-%d", uint8(k)) }

// TestEveryKindHasADriver: every Kind constant, from KindNAT44Global to the
// last one, has a registered descriptor that says what it sends and how its
// ops are built; a new kind without a file that registers one fails here.
func TestEveryKindHasADriver(t *testing.T) {
	require.True(t, named(vppcfg.KindDropRoute), "Kind.String no longer tells constants apart; fix named()")
	last := vppcfg.KindNAT44Global
	for k := vppcfg.KindNAT44Global; named(k); k++ {
		last = k
		kd := kindDrivers[k]
		if !assert.NotNil(t, kd, "kind %s has no driver descriptor: register one from a file of its own", k) {
			continue
		}
		assert.Equal(t, k, kd.kind, "descriptor in the slot of %s", k)
		assert.NotEmpty(t, kd.messages, "%s sends no message", k)
		assert.NotNil(t, kd.ops.build, "%s builds no op", k)
		assert.NotNil(t, kd.ops.item, "no op belongs to %s", k)
		if kd.dumpIfFound != 0 {
			assert.Less(t, kd.dumpIfFound, k, "%s's dump waits for a kind dumped after it", k)
		}
		if kd.ops.item != nil {
			zero := reflect.New(kd.ops.item.Elem()).Interface().(vppcfg.Item)
			assert.Equal(t, k, zero.Key().Kind, "the item type %s registered for %s is of another kind", kd.ops.item, k)
		}
	}
	assert.GreaterOrEqual(t, last, vppcfg.KindDropRoute)
	for k := int(last) + 1; k < len(kindDrivers); k++ {
		assert.Nil(t, kindDrivers[k], "a descriptor for kind %d, which vppcfg does not define", k)
	}
	assert.Nil(t, kindDrivers[0])
}

// TestOpsSendOnlyListedMessages: every request a kind's ops build is among
// the kind's messages, so the compatibility check looks it up before the
// driver sends it.
func TestOpsSendOnlyListedMessages(t *testing.T) {
	for kd := range registered() {
		listed := map[string]bool{}
		for _, m := range kd.messages {
			listed[m.GetMessageName()] = true
		}
		var ops []driverapi.Op
		if kd.ops.item != nil {
			for _, typ := range []driverapi.OpType{driverapi.OpCreate, driverapi.OpDelete, driverapi.OpUpdate} {
				it := reflect.New(kd.ops.item.Elem()).Interface().(vppcfg.Item)
				ops = append(ops, driverapi.Op{Type: typ, Key: it.Key(), Item: it, Old: it})
			}
		}
		if kd.kind == vppcfg.KindNAT44LBMapping {
			// The update steps of one local each, both ways.
			one := &vppcfg.NAT44LBMapping{Locals: []vppcfg.NAT44LBLocal{{Addr: ap("10.1.1.2:80")}}}
			two := &vppcfg.NAT44LBMapping{Locals: []vppcfg.NAT44LBLocal{{Addr: ap("10.1.1.2:80")}, {Addr: ap("10.1.1.3:80")}}}
			ops = append(ops, driverapi.Op{Type: driverapi.OpUpdate, Key: one.Key(), Item: two, Old: one},
				driverapi.Op{Type: driverapi.OpUpdate, Key: one.Key(), Item: one, Old: two})
		}
		sent := 0
		for i := range ops {
			op := &ops[i]
			require.Same(t, kd, driverOf(op), "%s is not looked up as %s", op, kd.kind)
			calls, err := kd.ops.build(op, &driverapi.OpResult{})
			require.NoError(t, err, "%s", op)
			for _, c := range calls {
				sent++
				assert.True(t, listed[c.req.GetMessageName()], "%s sends %s, not among the messages of %s",
					op, c.req.GetMessageName(), kd.kind)
			}
		}
		assert.Positive(t, sent, "no op of %s sends anything", kd.kind)
	}
}

// TestOpsOfNoKind: an op whose item no kind registered, or an item-less op
// of another type, fails as unsupported instead of reaching VPP.
func TestOpsOfNoKind(t *testing.T) {
	d := &Driver{}
	caps := &capabilities{cnat: true, routes: true}
	for _, op := range []driverapi.Op{
		{Type: driverapi.OpCreate, Item: &vppcfg.ACLBinding{Interface: "tap0", ACL: "a"}},
		{Type: driverapi.OpCreate},
	} {
		calls, err := d.buildOp(caps, &op, &driverapi.OpResult{})
		assert.Empty(t, calls)
		assert.ErrorIs(t, err, driverapi.ErrUnsupported, "%s", op)
	}
	op := &driverapi.Op{Type: driverapi.OpCreate, Item: &vppcfg.CNATSnatInterface{Interface: "tap0"}}
	_, err := d.buildOp(&capabilities{routes: true}, op, &driverapi.OpResult{})
	assert.ErrorIs(t, err, driverapi.ErrUnsupported)
	assert.Contains(t, err.Error(), "cnat plugin", "the missing capability is named")
}
