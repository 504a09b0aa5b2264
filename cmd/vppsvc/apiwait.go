package main

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8swait "k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// apiWait is how `vppsvc run` waits for the API server at its start: a node
// agent is often started before the API server answers (a control plane
// node boots, the API server restarts), and kube-proxy retries then rather
// than exit. Delays double from Min up to Max, with 10% jitter so that the
// agents of many nodes do not ask in step.
type apiWait struct {
	Min, Max time.Duration
	// Waiting is told, while the API server does not answer, why the agent
	// is not ready ("" once it answers): /healthz reports it.
	Waiting func(reason string)
	Log     logrus.FieldLogger
}

// Default delays of the wait: kube-proxy's first delay, and a ceiling that
// keeps the agent from sleeping long after the API server is back.
const (
	apiWaitMin = time.Second
	apiWaitMax = 30 * time.Second
)

// getNode reads this node's Node object, waiting for the API server as long
// as ctx lasts. A Node that does not exist is an error at once: the API
// server answered, and the --node name is wrong. ctx's end returns ctx's
// error.
func (w apiWait) getNode(ctx context.Context, client kubernetes.Interface, name string) (*corev1.Node, error) {
	backoff := k8swait.Backoff{Duration: w.Min, Factor: 2, Jitter: 0.1, Steps: int(^uint(0) >> 1), Cap: w.Max}
	start := time.Now()
	for attempt := 1; ; attempt++ {
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			if attempt > 1 {
				w.Log.WithFields(logrus.Fields{"attempts": attempt, "waited": time.Since(start).Round(time.Millisecond).String()}).
					Info("the API server answers")
			}
			w.Waiting("")
			return node, nil
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("unknown node %q: no such Node in the cluster", name)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		delay := backoff.Step()
		w.Waiting(fmt.Sprintf("waiting for the API server: reading node %q: %v", name, err))
		w.Log.WithError(err).WithFields(logrus.Fields{
			"attempt": attempt, "waited": time.Since(start).Round(time.Second).String(), "retry_in": delay.Round(time.Millisecond).String(),
		}).Info("waiting for the API server")
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
