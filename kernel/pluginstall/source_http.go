package pluginstall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// HTTPConfig tunes an HTTP mirror; zero fields take the defaults.
type HTTPConfig struct {
	// ConnectTimeout bounds connecting, TLS handshake included. Default 10s.
	ConnectTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for a response's headers
	// once the request is sent. Default 30s.
	ResponseHeaderTimeout time.Duration
	// FileTimeout is the overall deadline for one file, body included.
	// Default 10m (a 512 MiB archive at under 1 MB/s).
	FileTimeout time.Duration
}

func (c HTTPConfig) withDefaults() HTTPConfig {
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 10 * time.Second
	}
	if c.ResponseHeaderTimeout <= 0 {
		c.ResponseHeaderTimeout = 30 * time.Second
	}
	if c.FileTimeout <= 0 {
		c.FileTimeout = 10 * time.Minute
	}
	return c
}

// HTTPSource is a mirror served as static files over HTTP(S).
type HTTPSource struct {
	base   *url.URL
	cfg    HTTPConfig
	client *http.Client
}

// NewHTTPSource returns the mirror at rawURL.
func NewHTTPSource(rawURL string, cfg HTTPConfig) (*HTTPSource, error) {
	u, err := url.Parse(strings.TrimRight(rawURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("plugin mirror %q: %w", rawURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("plugin mirror %q: want http(s)://host/path", rawURL)
	}
	cfg = cfg.withDefaults()
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   cfg.ConnectTimeout,
		ResponseHeaderTimeout: cfg.ResponseHeaderTimeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
	}
	return &HTTPSource{base: u, cfg: cfg, client: &http.Client{Transport: transport}}, nil
}

// String is the mirror's URL, without a trailing slash.
func (h *HTTPSource) String() string { return h.base.String() }

// Open GETs one file. The returned body must be closed; the per-file
// deadline runs until then.
func (h *HTTPSource) Open(ctx context.Context, path string, limit int64) (io.ReadCloser, error) {
	if err := checkPath(h.String(), path); err != nil {
		return nil, err
	}
	fileCtx, cancel := context.WithTimeout(ctx, h.cfg.FileTimeout)
	req, err := http.NewRequestWithContext(fileCtx, http.MethodGet, h.base.JoinPath(path).String(), nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%s: %s: %w", h, path, err)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		cancel()
		return nil, h.describe(ctx, fileCtx, path, err)
	}
	if err := h.checkResponse(resp, path, limit); err != nil {
		resp.Body.Close()
		cancel()
		return nil, err
	}
	body := &httpBody{h: h, ctx: ctx, fileCtx: fileCtx, cancel: cancel, body: resp.Body, path: path}
	return newCapReader(body, limit, h.String(), path), nil
}

func (h *HTTPSource) checkResponse(resp *http.Response, path string, limit int64) error {
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return &NotFoundError{Mirror: h.String(), Path: path, Status: fmt.Sprint(resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%s: %s: the server answered %s", h, path, statusText(resp))
	case resp.ContentLength > limit:
		return &TooLargeError{Mirror: h.String(), Path: path, Limit: limit}
	}
	return nil
}

func statusText(resp *http.Response) string {
	if t := http.StatusText(resp.StatusCode); t != "" {
		return fmt.Sprintf("%d %s", resp.StatusCode, t)
	}
	return fmt.Sprint(resp.StatusCode)
}

// describe names what went wrong with a request: the caller's context,
// the per-file deadline, an unreachable host or a slow server.
func (h *HTTPSource) describe(ctx, fileCtx context.Context, path string, err error) error {
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %s: %w", h, path, ctx.Err())
	case errors.Is(fileCtx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s: %s: timed out after %s (the per-file deadline)", h, path, h.cfg.FileTimeout)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		if opErr.Timeout() {
			return fmt.Errorf("mirror %s unreachable: no connection within %s", h, h.cfg.ConnectTimeout)
		}
		return fmt.Errorf("mirror %s unreachable: %w", h, opErr)
	case errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("%s: %s: timed out: no response within %s", h, path, h.cfg.ResponseHeaderTimeout)
	}
	return fmt.Errorf("%s: %s: %w", h, path, err)
}

// httpBody ends the per-file deadline when closed and names read errors.
type httpBody struct {
	h       *HTTPSource
	ctx     context.Context
	fileCtx context.Context
	cancel  context.CancelFunc
	body    io.ReadCloser
	path    string
}

func (b *httpBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err != nil && err != io.EOF {
		err = b.h.describe(b.ctx, b.fileCtx, b.path, err)
	}
	return n, err
}

func (b *httpBody) Close() error {
	err := b.body.Close()
	b.cancel()
	return err
}

var _ Source = (*HTTPSource)(nil)
