package mcpsource

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"
)

// errResponseTooLarge is how a response body over Server.MaxResponseBytes
// ends; the source names the limit in its error.
var errResponseTooLarge = errors.New("response larger than Server.MaxResponseBytes")

// frameTooLarge reports whether err is the SDK's for a stdio message over
// its MaxLineLength (commandTransport sets it to MaxResponseBytes). The SDK
// does not export the error; TestStdioMessageTooLarge notices if its words
// change.
func frameTooLarge(err error) bool {
	return err != nil && strings.Contains(err.Error(), "frame exceeded the configured maximum line length")
}

// limitClient returns a copy of c (or of http.DefaultClient) whose
// responses are bounded at max bytes each. The SDK reads a JSON response
// whole, so without it a server could make the process hold any amount.
// Only the standalone event stream (a GET answered with text/event-stream)
// is left whole: it lasts the session, and the SDK bounds each of its
// events (StreamableClientTransport.MaxEventSize, set to the same max).
// trips counts the responses cut.
func limitClient(c *http.Client, max int64, trips *atomic.Int64) *http.Client {
	out := *cmp.Or(c, http.DefaultClient)
	out.Transport = &limitTransport{base: cmp.Or(out.Transport, http.DefaultTransport), max: max, trips: trips}
	return &out
}

type limitTransport struct {
	base  http.RoundTripper
	max   int64
	trips *atomic.Int64
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if req.Method == http.MethodGet && resp.StatusCode/100 == 2 && isEventStream(resp.Header.Get("Content-Type")) {
		return resp, nil
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		t.trips.Add(1)
		return nil, fmt.Errorf("%w (%d): it announces %d bytes", errResponseTooLarge, t.max, resp.ContentLength)
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: t.max, t: t}
	return resp, nil
}

func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
}

// limitedBody fails a read that would pass its limit; it never holds more
// than the caller's buffer.
type limitedBody struct {
	io.ReadCloser
	left    int64
	t       *limitTransport
	tripped bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.tripped {
		return 0, fmt.Errorf("%w (%d)", errResponseTooLarge, b.t.max)
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte past the limit tells a body at it from one over it
	}
	n, err := b.ReadCloser.Read(p)
	if int64(n) > b.left {
		b.tripped = true
		b.t.trips.Add(1)
		return 0, fmt.Errorf("%w (%d)", errResponseTooLarge, b.t.max)
	}
	b.left -= int64(n)
	return n, err
}
