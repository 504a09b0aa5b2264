package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/sirupsen/logrus"
)

// Options configure a Lab. Zero values take the defaults.
type Options struct {
	// Prefix starts every name the lab creates (DefaultPrefix).
	Prefix string
	// StateDir holds the records of what the lab created (DefaultStateDir).
	StateDir string
	// Log receives one entry per change to the machine (logrus' standard
	// logger by default).
	Log logrus.FieldLogger
}

// Lab creates and removes the Linux objects of one lab, all named with
// its prefix and marked as its own (see the package's safety rules). Its
// methods are safe for concurrent use; several processes may share one
// prefix and state directory (each namespace has its own record file).
type Lab struct {
	prefix string
	marker string
	dir    string // <StateDir>/<prefix>: the lab's records
	log    logrus.FieldLogger
	ip     runner
	// writeProc writes a /proc/sys file inside a namespace; tests fake it.
	writeProc func(ns, rel, value string) error

	mu sync.Mutex // serialises check-then-create sequences within a process
}

// New returns the Lab of opts. It changes nothing on the machine.
func New(opts Options) (*Lab, error) {
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.StateDir == "" {
		opts.StateDir = DefaultStateDir
	}
	if opts.Log == nil {
		opts.Log = logrus.StandardLogger()
	}
	if err := checkPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(opts.StateDir) {
		return nil, fmt.Errorf("lab state directory %q: want an absolute path", opts.StateDir)
	}
	return &Lab{
		prefix:    opts.Prefix,
		marker:    Marker(opts.Prefix),
		dir:       filepath.Join(opts.StateDir, opts.Prefix),
		log:       opts.Log.WithField("lab", opts.Prefix),
		ip:        runIP,
		writeProc: writeProcFile,
	}, nil
}

// Prefix is the prefix of every name the lab creates.
func (l *Lab) Prefix() string { return l.prefix }

// LinkName is the lab's link name for suffix (prefix + suffix), or an
// error when it does not fit the kernel's 15 bytes.
func (l *Lab) LinkName(suffix string) (string, error) {
	n := l.prefix + suffix
	return n, checkLinkName(n)
}

// NamespaceName is the lab's namespace name for suffix (prefix-suffix).
func (l *Lab) NamespaceName(suffix string) (string, error) {
	n := l.prefix + "-" + suffix
	return n, checkNamespaceName(n)
}

// nsRecordDir holds one empty file per namespace the lab created, written
// before the namespace is, so a run killed in between still cleans it.
func (l *Lab) nsRecordDir() string { return filepath.Join(l.dir, "netns") }

func (l *Lab) recordNamespace(ns string) error {
	if err := os.MkdirAll(l.nsRecordDir(), 0o755); err != nil {
		return fmt.Errorf("lab state: %w", err)
	}
	if err := os.WriteFile(filepath.Join(l.nsRecordDir(), ns), nil, 0o644); err != nil {
		return fmt.Errorf("lab state: %w", err)
	}
	return nil
}

func (l *Lab) forgetNamespace(ns string) error {
	if err := os.Remove(filepath.Join(l.nsRecordDir(), ns)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("lab state: %w", err)
	}
	return nil
}

// recordedNamespaces lists the namespaces the lab's records claim.
func (l *Lab) recordedNamespaces() ([]string, error) {
	es, err := os.ReadDir(l.nsRecordDir())
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lab state: %w", err)
	}
	var out []string
	for _, e := range es {
		if !e.IsDir() && checkNamespaceName(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func (l *Lab) isOurNamespace(ns string) bool {
	_, err := os.Stat(filepath.Join(l.nsRecordDir(), ns))
	return err == nil
}

// namespaces lists the machine's named namespaces.
func (l *Lab) namespaces(ctx context.Context) ([]string, error) {
	out, err := l.ip(ctx, "netns", "list")
	if err != nil {
		return nil, err
	}
	return parseNetnsList(out), nil
}
