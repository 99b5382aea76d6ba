package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// httpGet fetches URLs (the guests have no curl or wget): http-get
// [-timeout D] URL prints URL's body; http-get [-timeout D] URL FILE
// [URL FILE]... writes each body to its FILE, every FILE put in place
// only once every fetch succeeded (a pair of files is of one moment). A
// status other than 200 is an error. The timeout (10s) bounds all of it.
func httpGet(args []string, w io.Writer) error {
	fl := flag.NewFlagSet("http-get", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	timeout := fl.Duration("timeout", 10*time.Second, "")
	if err := fl.Parse(args); err != nil {
		return usageError("http-get: " + err.Error())
	}
	args = fl.Args()
	if len(args) == 0 || len(args) > 1 && len(args)%2 != 0 {
		return usageError("usage: guestcheck http-get [-timeout D] URL [FILE [URL FILE]...]")
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if len(args) == 1 {
		return fetch(ctx, args[0], w)
	}
	var tmps []string
	defer func() {
		for _, t := range tmps {
			_ = os.Remove(t) // gone once renamed
		}
	}()
	for i := 0; i < len(args); i += 2 {
		t := args[i+1] + ".tmp"
		tmps = append(tmps, t)
		f, err := os.Create(t)
		if err != nil {
			return err
		}
		err = fetch(ctx, args[i], f)
		if err := errors.Join(err, f.Close()); err != nil {
			return err
		}
	}
	for i, t := range tmps {
		if err := os.Rename(t, args[2*i+1]); err != nil {
			return err
		}
	}
	return nil
}

func fetch(ctx context.Context, url string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	// Connection: close, as python's urllib sent: the daemon closes the
	// connection once it has answered, so a scrape's socket is not still
	// open in the daemon when the next scrape counts its descriptors
	// (process_open_fds; the soak compares them).
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }() // read to the end or failed
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}
