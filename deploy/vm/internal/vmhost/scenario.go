package vmhost

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Scenarios are shell files with a header of "# vm-KEY: value" lines
// (deploy/vm/scenarios, deploy/vm/full/scenarios): timeout (seconds),
// test-all (no: not in make test), pack (Go commands of the repository the
// scenario runs, built into the guest's /vmtest/bin/, separated by spaces)
// and the scenario's own settings.

// ScenarioMeta reads the "# vm-KEY: value" lines of a scenario's header
// (the comment lines it begins with).
func ScenarioMeta(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	meta := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			break
		}
		if rest, ok := strings.CutPrefix(line, "# vm-"); ok {
			if k, v, ok := strings.Cut(rest, ":"); ok {
				if _, seen := meta[k]; !seen {
					meta[k] = strings.TrimSpace(v)
				}
			}
		}
	}
	return meta, sc.Err()
}

// ScenarioNames lists the scenarios of dir (the names of its *.sh).
func ScenarioNames(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sh"))
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".sh"))
	}
	return names, nil
}

// ScenarioFile is dir's scenario name, or an error listing those there.
func ScenarioFile(dir, name string) (string, error) {
	f := filepath.Join(dir, name+".sh")
	if st, err := os.Stat(f); err == nil && !st.IsDir() && !strings.ContainsRune(name, '/') {
		return f, nil
	}
	names, _ := ScenarioNames(dir)
	return "", fmt.Errorf("unknown scenario %q (have: %s)", name, strings.Join(names, " "))
}
