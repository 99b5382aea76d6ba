// Package docs holds the project's documentation (Markdown) and the test
// that keeps its references true.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// documents are the README and every file here.
func documents(t *testing.T) map[string]string {
	t.Helper()
	docs := map[string]string{}
	names, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range append(names, "../README.md") {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		docs[n] = string(b)
	}
	return docs
}

var (
	// link is a Markdown link's target.
	link = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// code is an inline code span or an indented code line.
	code = regexp.MustCompile("`([^`\n]+)`|(?m)^    (.+)$")
	// repoPath is a path into the repository as the documents write
	// them: a top-level directory and more, or a top-level file.
	repoPath = regexp.MustCompile(`^(?:(?:cmd|internal|target|scsi|tape|disk|fault|metrics|deploy|docs|tools|\.ci)/[\w./-]*|Makefile|LICENSE|CHANGELOG\.md|README\.md|go\.mod)$`)
	// makeTarget is a make command with its target.
	makeTarget = regexp.MustCompile(`\bmake ([a-z][a-z0-9-]*)`)
	// target is a Makefile rule's name.
	target = regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`)
)

// Every relative link, every repository path written in code and every
// make target the documents name exists: a moved file or a renamed
// target fails here, not in a newcomer's shell.
func TestReferencesExist(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range target.FindAllStringSubmatch(string(mk), -1) {
		targets[m[1]] = true
	}
	paths, makes := 0, 0
	for name, text := range documents(t) {
		dir := filepath.Dir(name)
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			l := m[1]
			if strings.Contains(l, "://") || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "mailto:") {
				continue
			}
			l, _, _ = strings.Cut(l, "#")
			if _, err := os.Stat(filepath.Join(dir, l)); err != nil {
				t.Errorf("%s: link %s: %v", name, m[1], err)
			}
			paths++
		}
		for _, m := range code.FindAllStringSubmatch(text, -1) {
			span := m[1] + m[2]
			for _, mm := range makeTarget.FindAllStringSubmatch(span, -1) {
				if !targets[mm[1]] {
					t.Errorf("%s: `%s`: the Makefile has no target %s", name, span, mm[1])
				}
				makes++
			}
			for _, w := range strings.Fields(span) {
				w = strings.TrimRight(w, ".,:;)")
				w = strings.TrimSuffix(w, "/")
				if !repoPath.MatchString(w) || strings.Contains(w, "/out/") || strings.ContainsAny(w, "*<>{}$") {
					continue
				}
				if _, err := os.Stat(filepath.Join("..", w)); err != nil {
					t.Errorf("%s: `%s` names %s, which does not exist", name, span, w)
				}
				paths++
			}
		}
	}
	if paths < 50 || makes < 10 {
		t.Errorf("found only %d paths and %d make targets: is the pattern still right?", paths, makes)
	}
}
