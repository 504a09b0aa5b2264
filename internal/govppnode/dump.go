package govppnode

import (
	"errors"
	"io"
)

// RecvAll reads a dump's stream to its end: (stream, err) as a generated
// dump call returns them.
func RecvAll[T any](s interface {
	Recv() (T, error)
	Close() error
}, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	var out []T
	for {
		d, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			_ = s.Close() // the generated client closes it only at the end
			return nil, err
		}
		out = append(out, d)
	}
}
