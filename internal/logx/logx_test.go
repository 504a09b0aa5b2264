package logx

import (
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
)

func TestDebugEnabled(t *testing.T) {
	l := logrus.New()
	l.SetLevel(logrus.InfoLevel)
	assert.False(t, DebugEnabled(l))
	assert.False(t, DebugEnabled(l.WithField("a", 1)))
	l.SetLevel(logrus.DebugLevel)
	assert.True(t, DebugEnabled(l))
	assert.True(t, DebugEnabled(l.WithField("a", 1)))
}
