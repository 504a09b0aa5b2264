package realvpp

import "testing"

// The helpers run without a VPP.

func TestParseHeapUsed(t *testing.T) {
	out := `Thread 0 vpp_main
  base 0x7f4651a9b000, size 1g, locked, unmap-on-destroy, name 'main heap'
    page stats: page-size 4K, total 262144, mapped 23703, not-mapped 0, unknown 238441
      numa 0: 23703 pages, 92.59m bytes
    total: 1024.00M, used: 36.74M, free: 987.26M, trimmable: 931.42M
`
	got, err := parseHeapUsed(out)
	if err != nil || got != 36.74*(1<<20) {
		t.Errorf("parseHeapUsed = %v, %v; want %v", got, err, 36.74*(1<<20))
	}
	if _, err := parseHeapUsed("nothing"); err == nil {
		t.Error("no error without a used figure")
	}
}

func TestIsReadOnly(t *testing.T) {
	for msg, want := range map[string]bool{
		"nat44_static_mapping_dump":             true,
		"control_ping":                          true,
		"nat44_show_running_config":             true,
		"cli_inband":                            true,
		"nat44_add_del_static_mapping_v2":       false,
		"nat44_add_del_lb_static_mapping":       false,
		"nat44_ed_plugin_enable_disable":        false,
		"acl_interface_set_acl_list":            false,
		"nat44_lb_static_mapping_add_del_local": false,
	} {
		if got := isReadOnly(msg); got != want {
			t.Errorf("isReadOnly(%s) = %t, want %t", msg, got, want)
		}
	}
}
