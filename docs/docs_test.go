// Package docs_test checks the documentation as a reader meets it: every
// relative link and #anchor of the Markdown files resolves as GitHub
// resolves it, every JSON example that is a workbench configuration loads
// through the workbench's own configuration loading (the errors the
// product gives), the README stays short, and no file of the repository
// names a path outside it.
package docs_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
)

// root is the repository's root, seen from this package's folder.
const root = ".."

// readmeMax is the most bytes README.md may hold: it is the page a new
// user reads in five minutes; the reference belongs in docs/.
const readmeMax = 15_000

// markdownFiles are the files whose links and examples are checked, as
// slash paths from the repository's root: the root's project files that
// exist, and every .md file under docs/.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, name := range []string{"README.md", "CONTRIBUTING.md", "CLAUDE.md", "SECURITY.md"} {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			files = append(files, name)
		}
	}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "README.md") || !slices.Contains(files, "docs/index.md") {
		t.Fatalf("README.md or docs/index.md is missing: found %v", files)
	}
	return files
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadmeIsShort(t *testing.T) {
	if n := len(read(t, "README.md")); n > readmeMax {
		t.Errorf("README.md is %d bytes, over its %d: move reference material to the page of its subject in docs/", n, readmeMax)
	}
}

// TestLinksResolve: every relative link's file exists inside the
// repository, and every #anchor names a heading (or an explicit anchor) of
// the Markdown file it points into.
func TestLinksResolve(t *testing.T) {
	files := markdownFiles(t)
	anchors := map[string]map[string]bool{} // by file, lazily
	anchorsOf := func(name string) map[string]bool {
		if a, ok := anchors[name]; ok {
			return a
		}
		a := headingAnchors(read(t, name))
		anchors[name] = a
		return a
	}
	checked := 0
	for _, name := range files {
		for _, l := range links(read(t, name)) {
			checked++
			if problem := resolve(name, l.target, anchorsOf); problem != "" {
				t.Errorf("%s:%d: link %q: %s", name, l.line, l.target, problem)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d links found in %d files: the link scanner is broken", checked, len(files))
	}
}

// resolve says what is wrong with target, a link of the Markdown file
// from (a slash path from the root), or "" when it resolves.
func resolve(from, target string, anchorsOf func(string) map[string]bool) string {
	if isExternal(target) {
		return ""
	}
	file, anchor, _ := strings.Cut(target, "#")
	if strings.Contains(file, "?") {
		return "a query in a relative link"
	}
	dest := from
	if file != "" {
		if strings.HasPrefix(file, "/") {
			return "an absolute path: write it relative to the file"
		}
		dest = path.Join(path.Dir(from), file)
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "it leads outside the repository"
		}
		info, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest)))
		if err != nil {
			return "no such file in the repository"
		}
		if info.IsDir() && anchor != "" {
			return "an anchor into a folder"
		}
	}
	if anchor == "" {
		return ""
	}
	if !strings.HasSuffix(dest, ".md") {
		return "" // a line of a source file (#L10) is GitHub's, not ours to check
	}
	if !anchorsOf(dest)[anchor] {
		return fmt.Sprintf("no heading of %s has the anchor #%s", dest, anchor)
	}
	return ""
}

func isExternal(target string) bool {
	if i := strings.IndexAny(target, ":/#?"); i > 0 && target[i] == ':' {
		return true // a scheme: https:, mailto:, …
	}
	return strings.HasPrefix(target, "//")
}

type link struct {
	target string
	line   int
}

var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	htmlHref   = regexp.MustCompile(`(?i)<a\s[^>]*href="([^"]+)"`)
)

// links are the link targets of a Markdown text, outside code.
func links(md string) []link {
	text := withoutCode(md)
	var out []link
	for _, re := range []*regexp.Regexp{inlineLink, refDef, htmlHref} {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			out = append(out, link{target: text[m[2]:m[3]], line: 1 + strings.Count(text[:m[2]], "\n")})
		}
	}
	return out
}

var codeSpan = regexp.MustCompile("(`+)[^`]+?(`+)")

// withoutCode blanks fenced code blocks and inline code spans, keeping
// every newline so that line numbers stay right.
func withoutCode(md string) string {
	var b strings.Builder
	fence := ""
	for _, line := range strings.SplitAfter(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			b.WriteString("\n")
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			if strings.HasSuffix(line, "\n") {
				b.WriteString("\n")
			}
			continue
		}
		b.WriteString(line)
	}
	return codeSpan.ReplaceAllStringFunc(b.String(), func(s string) string {
		return strings.Repeat("\n", strings.Count(s, "\n"))
	})
}

var (
	atxHeading = regexp.MustCompile(`(?m)^ {0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$`)
	htmlAnchor = regexp.MustCompile(`(?i)<a\s[^>]*(?:id|name)="([^"]+)"`)
	mdLinkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
)

// headingAnchors are the anchors GitHub gives the headings of a Markdown
// text, and its explicit <a id> anchors.
func headingAnchors(md string) map[string]bool {
	text := withoutCodeFences(md)
	seen := map[string]int{}
	anchors := map[string]bool{}
	for _, m := range atxHeading.FindAllStringSubmatch(text, -1) {
		slug := Slug(m[1])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	for _, m := range htmlAnchor.FindAllStringSubmatch(text, -1) {
		anchors[m[1]] = true
	}
	return anchors
}

// withoutCodeFences blanks fenced code blocks only: a heading's own code
// spans are part of its anchor.
func withoutCodeFences(md string) string {
	var b strings.Builder
	fence := ""
	for _, line := range strings.SplitAfter(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		default:
			b.WriteString(line)
			continue
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Slug is GitHub's anchor of a heading's text: the text as shown (link
// targets, markup and tags dropped), lower case, punctuation removed
// except - and _, each space a -.
func Slug(heading string) string {
	s := mdLinkText.ReplaceAllString(heading, "$1")
	s = htmlTag.ReplaceAllString(s, "")
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Moving from a host's configuration":        "moving-from-a-hosts-configuration",
		"Tool catalog, idle stop and live reload":   "tool-catalog-idle-stop-and-live-reload",
		"Claude Code's own prompt":                  "claude-codes-own-prompt",
		"The `http` block":                          "the-http-block",
		"Sharing, and HTTP replicas behind haproxy": "sharing-and-http-replicas-behind-haproxy",
		"Tool search: speed and memory":             "tool-search-speed-and-memory",
		"[Install](install.md) — fast":              "install--fast",
		"open_toolbox and use_tool":                 "open_toolbox-and-use_tool",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
	if a := headingAnchors("# A\n## A\n```\n# B\n```\n## A\n"); !a["a"] || !a["a-1"] || !a["a-2"] || a["b"] {
		t.Errorf("anchors of repeated headings and code: %v", a)
	}
}

// example is a workbench configuration shown in the docs.
type example struct {
	file string
	line int
	text string
}

var heredoc = regexp.MustCompile(`<<-?\s*'?"?([A-Za-z_]+)"?'?`)

// configExamples are the code blocks of a Markdown text that are
// workbench configurations: a json or jsonc block that names
// "toolboxes", and the body of a shell block's here-document that does.
func configExamples(name, md string) []example {
	var out []example
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var (
		lang  string
		fence string
		start int
		body  []string
		n     int
	)
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if fence == "" {
			if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
				fence, lang, start, body = trimmed[:3], strings.TrimSpace(trimmed[3:]), n, nil
			}
			continue
		}
		if strings.HasPrefix(trimmed, fence) {
			switch lang {
			case "json", "jsonc":
				if text := strings.Join(body, "\n"); strings.Contains(text, `"toolboxes"`) {
					out = append(out, example{name, start + 1, text})
				}
			case "sh", "shell", "bash", "console":
				out = append(out, hereDocs(name, start, body)...)
			}
			fence = ""
			continue
		}
		body = append(body, line)
	}
	return out
}

func hereDocs(name string, start int, lines []string) []example {
	var out []example
	for i := 0; i < len(lines); i++ {
		m := heredoc.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		from := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != m[1]; i++ {
		}
		if text := strings.Join(lines[from:min(i, len(lines))], "\n"); strings.Contains(text, `"toolboxes"`) {
			out = append(out, example{name, start + 1 + from, text})
		}
	}
	return out
}

// TestConfigExamplesLoad loads every configuration the docs show as the
// workbench loads its file when a host starts it: with its own loading,
// so the errors are the product's. Each ${VAR} is given a value, as the
// host's environment would (long enough for a state key). A warning (an
// unknown key, a TODO description) fails too: an example teaches what to
// write.
func TestConfigExamplesLoad(t *testing.T) {
	dir := t.TempDir()
	var all []example
	for _, name := range markdownFiles(t) {
		all = append(all, configExamples(name, read(t, name))...)
	}
	if len(all) < 3 {
		t.Fatalf("only %d configuration examples found: the scanner is broken", len(all))
	}
	env := func(name string) (string, bool) { return "value-of-" + name + "-for-the-docs-examples", true }
	for i, ex := range all {
		file := filepath.Join(dir, fmt.Sprintf("example-%d.json", i))
		if err := os.WriteFile(file, []byte(ex.text), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.LoadWith(file, env)
		if err != nil {
			t.Errorf("%s:%d: the example does not load:\n%v", ex.file, ex.line, err)
			continue
		}
		for _, w := range cfg.Warnings {
			t.Errorf("%s:%d: the example loads with a warning: %s", ex.file, ex.line, w)
		}
	}
}

// TestConfigurationReferenceNamesEverySchemaKey: docs/configuration.md is
// the configuration's reference, so each key the schema knows is named
// there, in backquotes.
func TestConfigurationReferenceNamesEverySchemaKey(t *testing.T) {
	keys, err := schemaKeys(filepath.Join(root, "workbench-config.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 40 {
		t.Fatalf("only %d keys read from the schema: the reader is broken", len(keys))
	}
	ref := read(t, "docs/configuration.md")
	for _, k := range keys {
		if !strings.Contains(ref, "`"+k+"`") && !strings.Contains(ref, "`\""+k+"\"") {
			t.Errorf("docs/configuration.md does not name the schema's key `%s`", k)
		}
	}
}

// TestNoPathOutsideTheRepository: no file of the repository names the
// workspace outside it, nor a relative path that climbs above the root.
func TestNoPathOutsideTheRepository(t *testing.T) {
	workspace := "../" + "shared" // written so that this file does not name it
	climb := regexp.MustCompile(`(?:^|[^.\w])((?:\.\./)+)[\w.-]`)
	var offenders []string
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == ".git", rel == "bin", rel == "dist", d.Name() == "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.IndexByte(b, 0) >= 0 {
			return nil // binary
		}
		files++
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, workspace) {
				offenders = append(offenders, fmt.Sprintf("%s:%d: names %s, a workspace outside the repository", rel, i+1, workspace))
				continue
			}
			for _, m := range climb.FindAllStringSubmatch(line, -1) {
				if to := path.Join(path.Dir(rel), m[1]); to == ".." || strings.HasPrefix(to, "../") {
					offenders = append(offenders, fmt.Sprintf("%s:%d: %q climbs out of the repository", rel, i+1, strings.TrimSpace(m[0])))
				}
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d files read: the walk is broken", files)
	}
	for _, o := range offenders {
		t.Error(o)
	}
}

// schemaKeys are the names of every property the JSON schema at file
// declares, at any depth.
func schemaKeys(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	set := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for k := range props {
					set[k] = true
				}
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	keys := slices.Sorted(maps.Keys(set))
	return keys, nil
}
