package model

import (
	"slices"
	"testing"
)

func TestPortsStaySortedAndShallowCopiesApart(t *testing.T) {
	svc := &ContivService{ID: ServiceID{"default", "web"}}
	svc.SetPort("https", ServicePort{Protocol: ProtocolTCP, Port: 443})
	svc.SetPort("", ServicePort{Protocol: ProtocolUDP, Port: 53})
	svc.SetPort("http", ServicePort{Protocol: ProtocolTCP, Port: 80})
	svc.SetBackends("http", []ServiceBackend{ep("10.1.1.2:8080")})
	if got := svc.PortNames(); !slices.Equal(got, []string{"", "http", "https"}) {
		t.Fatalf("PortNames = %q, want sorted", got)
	}

	copied := *svc // a shallow copy shares the Ports list
	copied.SetPort("http", ServicePort{Protocol: ProtocolTCP, Port: 8000})
	copied.SetBackends("https", []ServiceBackend{ep("10.1.1.3:8443")})
	copied.DeletePort("")
	if p, _ := svc.Port("http"); p.Port != 80 {
		t.Errorf("SetPort on a copy changed the original: %v", p)
	}
	if got := svc.Backends("https"); got != nil {
		t.Errorf("SetBackends on a copy changed the original: %v", got)
	}
	if _, ok := svc.Port(""); !ok {
		t.Error("DeletePort on a copy changed the original")
	}
	if p, ok := copied.Port("http"); !ok || p.Port != 8000 || len(copied.Backends("http")) != 1 {
		t.Errorf("SetPort lost the backends or the change: %v %v", p, copied.Backends("http"))
	}
	if _, ok := copied.Port(""); ok || len(copied.Ports) != 2 {
		t.Errorf("DeletePort left %v", copied.Ports)
	}
	if _, ok := svc.Port("other"); ok || svc.Backends("other") != nil {
		t.Error("an unknown port exists")
	}
}

func TestSetBackendsOfUnknownPortPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("SetBackends of an unknown port did not panic")
		}
	}()
	(&ContivService{}).SetBackends("http", nil)
}

func TestEqualAndCloneCoverPorts(t *testing.T) {
	svc := &ContivService{ID: ServiceID{"default", "web"}, Ports: []NamedPort{
		{Name: "http", ServicePort: ServicePort{Protocol: ProtocolTCP, Port: 80}, Backends: []ServiceBackend{ep("10.1.1.2:8080")}},
	}}
	svc.Ports[0].Backends[0].ZoneHints = NewZones("a")
	c := svc.Clone()
	if !c.Equal(svc) {
		t.Fatal("a clone differs")
	}
	c.Ports[0].Backends[0].ZoneHints.List()[0] = "b" // a copy: the set cannot change
	c.Ports[0].Backends[0].Port = 1
	if svc.Ports[0].Backends[0].Port != 8080 || !svc.Ports[0].Backends[0].ZoneHints.Has("a") || svc.Ports[0].Backends[0].ZoneHints.Has("b") {
		t.Error("the clone shares backends, or zone hints changed through List")
	}
	c = svc.Clone()
	c.Ports[0].Backends[0].ZoneHints = NewZones("b")
	if c.Equal(svc) {
		t.Error("Equal ignores zone hints")
	}
	for _, change := range []func(*ContivService){
		func(s *ContivService) { s.SetPort("http", ServicePort{Protocol: ProtocolTCP, Port: 81}) },
		func(s *ContivService) { s.SetPort("https", ServicePort{Protocol: ProtocolTCP, Port: 443}) },
		func(s *ContivService) { s.SetBackends("http", nil) },
		func(s *ContivService) { s.DeletePort("http") },
	} {
		other := svc.Clone()
		change(other)
		if other.Equal(svc) {
			t.Errorf("Equal misses a change of ports: %v", other)
		}
	}
}
