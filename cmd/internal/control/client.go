package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/internal/trace"
)

// DefaultSocket is where vscsid listens unless --control.socket says
// otherwise.
const DefaultSocket = "/run/vscsid/vscsid.sock"

// Client talks to vscsid's control socket. Its methods return the
// daemon's refusals as *Error.
type Client struct {
	socket string
	hc     *http.Client
}

// NewClient returns a client of the socket at path.
func NewClient(path string) *Client {
	return &Client{socket: path, hc: &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		}},
	}}
}

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

func devicePath(name string, rest ...string) string {
	return "/v1/devices/" + url.PathEscape(name) + strings.Join(rest, "")
}

// Devices lists the devices vscsid serves.
func (c *Client) Devices(ctx context.Context) ([]Device, error) {
	var out []Device
	return out, c.do(ctx, http.MethodGet, "/v1/devices", nil, &out)
}

// Create creates a device in the running daemon.
func (c *Client) Create(ctx context.Context, req CreateDevice) (Device, error) {
	var out Device
	return out, c.do(ctx, http.MethodPost, "/v1/devices", req, &out)
}

// Remove removes a device vscsid created.
func (c *Client) Remove(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, devicePath(name), nil, nil)
}

// Stats returns a device's live statistics.
func (c *Client) Stats(ctx context.Context, name string) (Stats, error) {
	var out Stats
	return out, c.do(ctx, http.MethodGet, devicePath(name, "/stats"), nil, &out)
}

// Load loads the cartridge barcode into the tape drive name.
func (c *Client) Load(ctx context.Context, name, barcode string) error {
	return c.do(ctx, http.MethodPost, devicePath(name, "/load"), Load{Barcode: barcode}, nil)
}

// Unload unloads the tape drive name.
func (c *Client) Unload(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodPost, devicePath(name, "/unload"), nil, nil)
}

// Faults returns a device's fault injection.
func (c *Client) Faults(ctx context.Context, name string) (Faults, error) {
	var out Faults
	return out, c.do(ctx, http.MethodGet, devicePath(name, "/faults"), nil, &out)
}

// AddFault installs a fault rule and returns its ID.
func (c *Client) AddFault(ctx context.Context, name, rule string) (uint64, error) {
	var out FaultAdded
	err := c.do(ctx, http.MethodPost, devicePath(name, "/faults"), AddFault{Rule: rule}, &out)
	return out.ID, err
}

// RemoveFault removes the rule id.
func (c *Client) RemoveFault(ctx context.Context, name string, id uint64) error {
	return c.do(ctx, http.MethodDelete, devicePath(name, "/faults/", strconv.FormatUint(id, 10)), nil, nil)
}

// ClearFaults removes every rule of a device.
func (c *Client) ClearFaults(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, devicePath(name, "/faults"), nil, nil)
}

// SetTiming sets a device's timing model ("" for none).
func (c *Client) SetTiming(ctx context.Context, name, timing string) error {
	return c.do(ctx, http.MethodPut, devicePath(name, "/faults/timing"), SetTiming{Timing: timing}, nil)
}

func libraryPath(name, rest string) string { return "/v1/libraries/" + url.PathEscape(name) + rest }

// Library returns a vlibrary's elements.
func (c *Client) Library(ctx context.Context, name string) (Library, error) {
	var out Library
	return out, c.do(ctx, http.MethodGet, libraryPath(name, ""), nil, &out)
}

// Move moves a cartridge between two elements of a library.
func (c *Client) Move(ctx context.Context, name string, m Move) error {
	return c.do(ctx, http.MethodPost, libraryPath(name, "/move"), m, nil)
}

// Import puts a cartridge of the media directory into a free mail slot.
func (c *Client) Import(ctx context.Context, name, barcode string) (Element, error) {
	var out Element
	return out, c.do(ctx, http.MethodPost, libraryPath(name, "/import"), Import{Barcode: barcode}, &out)
}

// Export takes the cartridge out of mail slot index.
func (c *Client) Export(ctx context.Context, name string, index int) (Element, error) {
	var out Element
	return out, c.do(ctx, http.MethodPost, libraryPath(name, "/export"), Export{Index: index}, &out)
}

// Trace streams the commands of the devices named (none: every device)
// that f selects: fn gets the lines as the daemon sent them, trace.Events
// in JSON, or their text when text, one or more whole lines at a time,
// each with its newline (a busy trace arrives in pieces of up to 256 KiB, and
// the reader need not touch each line). It returns when ctx is done
// (nil), fn fails (its error) or the daemon ends the stream.
func (c *Client) Trace(ctx context.Context, devices []string, f trace.Filter, text bool, fn func(lines []byte) error) error {
	q := url.Values{"device": devices}
	f.Query(q)
	if text {
		q.Set("format", "text")
	}
	body, err := c.open(ctx, "/v1/trace?"+q.Encode())
	if body == nil {
		return err
	}
	defer func() { _ = body.Close() }()
	buf, n := make([]byte, 64<<10), 0
	for {
		k, rerr := body.Read(buf[n:])
		n += k
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			if err := fn(buf[:i+1]); err != nil {
				return err
			}
			n = copy(buf, buf[i+1:n])
		} else if n == len(buf) {
			if n >= maxLine {
				return fmt.Errorf("stream from vscsid: a line longer than %d bytes", maxLine)
			}
			buf = append(buf, make([]byte, n)...) // a line longer than the buffer
		}
		switch {
		case rerr == nil:
		case ctx.Err() != nil, rerr == io.EOF && n == 0:
			return nil
		case rerr == io.EOF:
			return fmt.Errorf("stream from vscsid: %w (a line without its end)", io.ErrUnexpectedEOF)
		default:
			return fmt.Errorf("stream from vscsid: %w", rerr)
		}
	}
}

// maxLine bounds a streamed line: a recorded command with a 16 MiB
// payload, in base64 and JSON.
const maxLine = 32 << 20

// Record streams a recording of the devices named (none: every device),
// with Data-Out payloads when payloads: fn gets each JSON line, the
// header (record.Header) first. It ends as Trace does.
func (c *Client) Record(ctx context.Context, devices []string, payloads bool, fn func(line []byte) error) error {
	q := url.Values{"device": devices, "payloads": {strconv.FormatBool(payloads)}}
	return c.stream(ctx, "/v1/record?"+q.Encode(), fn)
}

// open starts a streaming answer: its body, or nil and the error (nil
// when ctx ended first).
func (c *Client) open(ctx context.Context, path string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://vscsid"+path, nil)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: c.hc.Transport} // no timeout: the stream lasts
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, c.dialError(err)
	}
	if resp.StatusCode >= 300 {
		defer func() { _ = resp.Body.Close() }()
		return nil, errorOf(resp)
	}
	return resp.Body, nil
}

// stream reads a streaming answer line by line.
func (c *Client) stream(ctx context.Context, path string, fn func(line []byte) error) error {
	body, err := c.open(ctx, path)
	if body == nil {
		return err
	}
	defer func() { _ = body.Close() }()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		if err := fn(sc.Bytes()); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("stream from vscsid: %w", err)
	}
	return nil
}

// errorOf is the *Error of a 4xx/5xx answer.
func errorOf(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &Error{Status: resp.StatusCode}
	if json.Unmarshal(b, e) != nil || e.Message == "" {
		e.Message = fmt.Sprintf("vscsid answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return e
}

// do sends a request and decodes a JSON answer into out (if not nil).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://vscsid"+path, r)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.dialError(err)
	}
	defer func() { _ = resp.Body.Close() }() // read side: nothing to lose
	if resp.StatusCode >= 300 {
		return errorOf(resp)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("bad answer from vscsid: %w", err)
	}
	return nil
}

// dialError explains why the daemon cannot be reached.
func (c *Client) dialError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, unix.ECONNREFUSED):
		return fmt.Errorf("vscsid is not running (no socket at %s): start it with systemctl start vscsid", c.socket)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot talk to vscsid at %s: permission denied (run as root)", c.socket)
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return fmt.Errorf("cannot talk to vscsid at %s: %w", c.socket, err)
}
