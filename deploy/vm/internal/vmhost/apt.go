package vmhost

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The guests are built from Debian packages, fetched with apt from the
// mirror the machine's own apt uses (or VM_DEBIAN_MIRROR): no mirror is
// written in the repository, so a machine behind a local mirror or proxy
// keeps using it.

// MachineCodename is the machine's Debian release (VERSION_CODENAME of
// /etc/os-release), or "".
func MachineCodename() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VERSION_CODENAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// aptSourceFiles are the machine's apt source files, one-line and deb822.
func aptSourceFiles() []string {
	files := []string{"/etc/apt/sources.list"}
	for _, pat := range []string{"/etc/apt/sources.list.d/*.list", "/etc/apt/sources.list.d/*.sources"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	return files
}

// AptSourceURI is the first URI of the apt source files that serves
// suite's main component as "deb" (one-line .list entries and deb822
// .sources stanzas; disabled stanzas skipped), with a trailing slash, or
// "".
func AptSourceURI(files []string, suite string) string {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var uri string
		if strings.HasSuffix(f, ".sources") {
			uri = deb822URI(string(b), suite)
		} else {
			uri = oneLineURI(string(b), suite)
		}
		if uri != "" {
			return strings.TrimRight(uri, "/") + "/"
		}
	}
	return ""
}

// oneLineURI reads "deb [options] URI SUITE COMPONENT..." lines.
func oneLineURI(text, suite string) string {
	for _, l := range strings.Split(text, "\n") {
		l, _, _ = strings.Cut(l, "#")
		f := strings.Fields(l)
		if len(f) < 4 || f[0] != "deb" {
			continue
		}
		f = f[1:]
		if strings.HasPrefix(f[0], "[") { // options, up to the word ending in ]
			i := slices.IndexFunc(f, func(w string) bool { return strings.HasSuffix(w, "]") })
			if i < 0 {
				continue
			}
			f = f[i+1:]
		}
		if len(f) >= 3 && f[1] == suite && slices.Contains(f[2:], "main") {
			return f[0]
		}
	}
	return ""
}

// deb822URI reads stanzas of "Key: value" fields (continuation lines
// begin with a blank) separated by blank lines.
func deb822URI(text, suite string) string {
	stanza := map[string]string{}
	last := ""
	check := func() string {
		defer clear(stanza)
		if strings.EqualFold(stanza["enabled"], "no") ||
			!slices.Contains(strings.Fields(stanza["types"]), "deb") ||
			!slices.Contains(strings.Fields(stanza["suites"]), suite) ||
			!slices.Contains(strings.Fields(stanza["components"]), "main") {
			return ""
		}
		if u := strings.Fields(stanza["uris"]); len(u) > 0 {
			return u[0]
		}
		return ""
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "#"):
		case strings.TrimSpace(l) == "":
			if u := check(); u != "" {
				return u
			}
		case l[0] == ' ' || l[0] == '\t':
			stanza[last] += " " + strings.TrimSpace(l)
		default:
			k, v, _ := strings.Cut(l, ":")
			last = strings.ToLower(strings.TrimSpace(k))
			stanza[last] = strings.TrimSpace(v)
		}
	}
	return check()
}

// DebianMirror is the Debian mirror to fetch packages from:
// VM_DEBIAN_MIRROR, else the one the machine's apt sources use for its own
// release. With security, the security mirror (VM_DEBIAN_SECURITY_MIRROR,
// else the machine's RELEASE-security), which may be "".
func DebianMirror(security bool) (string, error) {
	codename := MachineCodename()
	if security {
		if m := os.Getenv("VM_DEBIAN_SECURITY_MIRROR"); m != "" {
			return m, nil
		}
		if codename == "" {
			return "", nil
		}
		return AptSourceURI(aptSourceFiles(), codename+"-security"), nil
	}
	if m := os.Getenv("VM_DEBIAN_MIRROR"); m != "" {
		return m, nil
	}
	if codename != "" {
		if u := AptSourceURI(aptSourceFiles(), codename); u != "" {
			return u, nil
		}
	}
	release := codename
	if release == "" {
		release = "its release"
	}
	return "", fmt.Errorf("no Debian mirror: the machine's apt sources (/etc/apt/sources.list, /etc/apt/sources.list.d/*.list and *.sources) have no 'deb' entry for %s main; set VM_DEBIAN_MIRROR to a Debian mirror's URL", release)
}

// SetupApt returns the apt options for suite: none (the machine's own
// configuration) when the suite is the machine's, else a private sources
// list, state, cache and empty dpkg status under cache/SUITE/apt, so that
// the machine's own apt is never changed. The private lists are fetched
// once (again with refresh).
func SetupApt(cache, suite string, refresh bool) ([]string, error) {
	if suite == MachineCodename() && os.Getenv("VM_PRIVATE_APT") == "" {
		return nil, nil
	}
	a := filepath.Join(cache, suite, "apt")
	for _, sub := range []string{"lists/partial", "cache/archives/partial", "parts", "prefs"} {
		if err := os.MkdirAll(filepath.Join(a, sub), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(a, "status"), nil, 0o644); err != nil {
		return nil, err
	}
	const key = "/usr/share/keyrings/debian-archive-keyring.gpg"
	if _, err := os.Stat(key); err != nil {
		return nil, fmt.Errorf("%s missing (apt-get install debian-archive-keyring)", key)
	}
	mirror, err := DebianMirror(false)
	if err != nil {
		return nil, err
	}
	security, err := DebianMirror(true)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "deb [signed-by=%s] %s %s main\n", key, mirror, suite)
	if suite != "sid" {
		fmt.Fprintf(&b, "deb [signed-by=%s] %s %s-updates main\n", key, mirror, suite)
		if security != "" {
			fmt.Fprintf(&b, "deb [signed-by=%s] %s %s-security main\n", key, security, suite)
		}
	}
	if err := os.WriteFile(filepath.Join(a, "sources.list"), []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	opts := []string{
		"-o", "Dir::Etc::SourceList=" + a + "/sources.list",
		"-o", "Dir::Etc::SourceParts=" + a + "/parts",
		"-o", "Dir::Etc::Preferences=" + a + "/prefs/none",
		"-o", "Dir::Etc::PreferencesParts=" + a + "/prefs",
		"-o", "Dir::State::Lists=" + a + "/lists",
		"-o", "Dir::State::Status=" + a + "/status",
		"-o", "Dir::Cache=" + a + "/cache",
		"-o", "APT::Architecture=amd64",
		"-o", "APT::Architectures=amd64",
		"-o", "Acquire::Languages=none",
	}
	updated := filepath.Join(a, "lists/.updated")
	if _, err := os.Stat(updated); err != nil || refresh {
		Logf("apt-get update (%s, private lists in %s)", suite, a)
		if err := runToStderr("apt-get", append(opts, "update", "-qq")...); err != nil {
			return nil, fmt.Errorf("apt-get update for %s failed", suite)
		}
		if err := os.WriteFile(updated, nil, 0o644); err != nil {
			return nil, err
		}
	}
	return opts, nil
}

// CacheDir is where downloads, extracted packages, debootstrapped roots
// and the LTFS build are kept, outside the checkout (as Go keeps its build
// cache), so that a fresh clone, CI's included, reuses them: VM_CACHE_DIR,
// else $XDG_CACHE_HOME/vscsid/vm, else ~/.cache/vscsid/vm. Everything in
// it is keyed by what made it and rebuilt when that changes.
func CacheDir(d Dirs) string {
	if c := os.Getenv("VM_CACHE_DIR"); c != "" {
		return c
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home := os.Getenv("HOME")
		if home == "" {
			home = d.VM
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "vscsid/vm")
}
