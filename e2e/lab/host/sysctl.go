package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Sysctl sets the kernel parameter key (net.ipv4.ping_group_range, or in
// slash form net/ipv6/conf/eth0.1/accept_ra when a part holds a dot) to
// value inside the lab's namespace ns. Network parameters are per
// namespace: the write happens on a thread switched into ns.
func (l *Lab) Sysctl(ns, key, value string) error {
	if !l.isOurNamespace(ns) {
		return fmt.Errorf("sysctl %s: namespace %s is not the lab's", key, ns)
	}
	rel, err := sysctlPath(key)
	if err != nil {
		return err
	}
	if err := l.writeProc(ns, rel, value); err != nil {
		return fmt.Errorf("sysctl %s=%s in %s: %w", key, value, ns, err)
	}
	l.log.WithFields(map[string]any{"namespace": ns, "sysctl": key, "value": value}).Debug("sysctl set")
	return nil
}

// sysctlPath turns a sysctl key into its path under /proc/sys.
func sysctlPath(key string) (string, error) {
	rel := key
	if !strings.Contains(key, "/") {
		rel = strings.ReplaceAll(key, ".", "/")
	}
	clean := filepath.Clean(rel)
	if rel == "" || filepath.IsAbs(clean) || clean == "." || strings.HasPrefix(clean, "..") {
		return "", fmt.Errorf("sysctl key %q: want a key under /proc/sys", key)
	}
	return clean, nil
}

// writeProcFile writes value to /proc/sys/rel inside ns ("" is the
// caller's own namespace, the root one).
func writeProcFile(ns, rel, value string) error {
	write := func() error { return os.WriteFile(filepath.Join("/proc/sys", rel), []byte(value), 0o644) }
	if ns == "" {
		return write()
	}
	return InNamespace(ns, write)
}
