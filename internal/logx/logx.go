// Package logx holds the project's small logging helpers.
package logx

import "github.com/sirupsen/logrus"

// DebugEnabled reports whether l would write a debug entry. Hot paths (one
// entry per written item) check it first: building logrus fields allocates
// even when the entry is then dropped.
func DebugEnabled(l logrus.FieldLogger) bool {
	switch v := l.(type) {
	case *logrus.Logger:
		return v.IsLevelEnabled(logrus.DebugLevel)
	case *logrus.Entry:
		return v.Logger.IsLevelEnabled(logrus.DebugLevel)
	}
	return true // an unknown logger decides for itself
}
