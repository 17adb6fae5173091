package main

// Checks of deploy/ as far as this machine allows: no container engine
// and no cluster run here, so the image and the manifests are read, not
// run; what they ask of the workbench (flags, endpoints, files, the
// configuration) is checked against the workbench itself, and haproxy
// checks its own configuration.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"go.yaml.in/yaml/v3"
)

// deployDir is the repository's deploy folder.
func deployDir(t testing.TB) string {
	return filepath.Join(fakeserver.RepoRoot(t), "deploy")
}

// manifest is one Kubernetes object as YAML gives it.
type manifest = map[string]any

// dig follows keys (and list indexes, as ints) into v; nil when a step is
// missing.
func dig(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// readManifests parses every document of every YAML file of
// deploy/kubernetes, by kind and name.
func readManifests(t *testing.T) map[string]manifest {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(deployDir(t), "kubernetes", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no YAML files in deploy/kubernetes")
	}
	out := map[string]manifest{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for i := 0; ; i++ {
			var m manifest
			err := dec.Decode(&m)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s, document %d: %v", filepath.Base(f), i+1, err)
			}
			kind, _ := m["kind"].(string)
			name, _ := dig(m, "metadata", "name").(string)
			if m["apiVersion"] == nil || kind == "" || name == "" {
				t.Fatalf("%s, document %d: no apiVersion, kind or metadata.name", filepath.Base(f), i+1)
			}
			if _, dup := out[kind+"/"+name]; dup {
				t.Fatalf("%s: %s/%s defined twice", filepath.Base(f), kind, name)
			}
			out[kind+"/"+name] = m
		}
	}
	return out
}

// serveHelp is what mcp-workbench serve --help prints.
func serveHelp(t *testing.T) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"serve", "--help"}, strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("serve --help: %v\n%s", err, errOut.String())
	}
	return out.String()
}

// checkServeArgs checks a command line of the image or a manifest: serve
// --http with an address whose port is port, --config; every flag one
// that serve --help names.
func checkServeArgs(t *testing.T, where string, args []string, help string) (port int, configPath string) {
	t.Helper()
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("%s: %q does not run serve", where, args)
	}
	for i, a := range args {
		if !strings.HasPrefix(a, "--") {
			continue
		}
		flagName := strings.SplitN(a, "=", 2)[0]
		if !regexp.MustCompile(`(^|[\s\[])` + regexp.QuoteMeta(flagName) + `[\s=\]]`).MatchString(help) {
			t.Errorf("%s: flag %s is not in serve --help:\n%s", where, flagName, help)
		}
		if i+1 < len(args) {
			switch flagName {
			case "--http":
				_, p, err := net.SplitHostPort(args[i+1])
				if err != nil {
					t.Fatalf("%s: --http %q: %v", where, args[i+1], err)
				}
				port, _ = strconv.Atoi(p)
			case "--config":
				configPath = args[i+1]
			}
		}
	}
	if port == 0 || configPath == "" {
		t.Fatalf("%s: %q has no --http ADDR:PORT or no --config", where, args)
	}
	return port, configPath
}

// dockerfile is deploy/Dockerfile's instructions, stage by stage.
type dockerStage struct {
	from  string
	lines []string // instructions, continuation lines joined
}

func readDockerfile(t *testing.T) (args map[string]string, stages []dockerStage) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(deployDir(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	args = map[string]string{}
	var cur strings.Builder
	flush := func() {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return
		}
		word, rest, _ := strings.Cut(line, " ")
		switch word = strings.ToUpper(word); {
		case word == "FROM":
			stages = append(stages, dockerStage{from: rest})
		case word == "ARG" && len(stages) == 0:
			name, value, _ := strings.Cut(rest, "=")
			args[name] = value
		case len(stages) == 0:
			t.Fatalf("Dockerfile: %s before the first FROM", word)
		default:
			s := &stages[len(stages)-1]
			s.lines = append(s.lines, word+" "+rest)
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if l, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(l + " ")
			continue
		}
		cur.WriteString(line)
		flush()
	}
	flush()
	return args, stages
}

// instruction is the argument of the last instruction word of stage s.
func (s dockerStage) instruction(word string) string {
	out := ""
	for _, l := range s.lines {
		if w, rest, _ := strings.Cut(l, " "); w == word {
			out = rest
		}
	}
	return out
}

// TestDockerfile: deploy/Dockerfile builds the binary with the Makefile in
// a Go of go.mod's version, runs it in an image with Node (npx servers) as
// a user that is not root, and serves --http with flags that serve has.
func TestDockerfile(t *testing.T) {
	args, stages := readDockerfile(t)
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: %d stages, want a build stage and a runtime stage", len(stages))
	}
	build, runtime := stages[0], stages[len(stages)-1]
	gomod, err := os.ReadFile(filepath.Join(fakeserver.RepoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(string(gomod))
	if goVersion == nil || args["GO_VERSION"] != goVersion[1] {
		t.Errorf("Dockerfile: ARG GO_VERSION=%s; go.mod says go %v", args["GO_VERSION"], goVersion)
	}
	if !strings.HasPrefix(build.from, "golang:${GO_VERSION}") || !strings.Contains(build.instruction("RUN"), "make build") {
		t.Errorf("Dockerfile: the build stage (FROM %s) does not build with make build in golang:${GO_VERSION}", build.from)
	}
	if !strings.HasPrefix(runtime.from, "node:") {
		t.Errorf("Dockerfile: the runtime image is %s; want Node's, for npx servers", runtime.from)
	}
	if !strings.Contains(runtime.instruction("COPY"), "--from=build /src/bin/mcp-workbench ") {
		t.Errorf("Dockerfile: the runtime stage does not take the binary make build wrote")
	}
	user := strings.SplitN(runtime.instruction("USER"), ":", 2)[0]
	if uid, err := strconv.Atoi(user); err != nil || uid == 0 {
		t.Errorf("Dockerfile: USER %q; want a numeric user that is not root (runAsNonRoot needs a number)", user)
	}

	var entry, cmd []string
	if err := json.Unmarshal([]byte(runtime.instruction("ENTRYPOINT")), &entry); err != nil {
		t.Fatalf("Dockerfile: ENTRYPOINT is not an exec-form list: %v", err)
	}
	if err := json.Unmarshal([]byte(runtime.instruction("CMD")), &cmd); err != nil {
		t.Fatalf("Dockerfile: CMD is not an exec-form list: %v", err)
	}
	if len(entry) == 0 || path.Base(entry[len(entry)-1]) != "mcp-workbench" {
		t.Errorf("Dockerfile: ENTRYPOINT %q does not end with the workbench", entry)
	}
	port, configPath := checkServeArgs(t, "Dockerfile CMD", cmd, serveHelp(t))
	if expose := runtime.instruction("EXPOSE"); expose != strconv.Itoa(port) {
		t.Errorf("Dockerfile: EXPOSE %s, but serve --http listens on %d", expose, port)
	}
	if !strings.HasPrefix(configPath, "/etc/mcp-workbench/") {
		t.Errorf("Dockerfile: --config %s is not under /etc/mcp-workbench, the folder it makes for the mount", configPath)
	}
}

// TestKubernetesManifests: deploy/kubernetes parses, kustomization.yaml
// names every file, and what the Deployment asks of the workbench is what
// the workbench has: the image's command line, the probes' paths, the
// port, the folders of the configuration and the token store, every
// ${VAR} of the configuration, a grace period longer than its shutdown
// bound; and the configuration is valid, without a warning.
func TestKubernetesManifests(t *testing.T) {
	objs := readManifests(t)
	dir := deployDir(t)

	// kustomization.yaml: every manifest listed, every file there.
	var kust map[string]any
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err == nil {
		err = yaml.Unmarshal(data, &kust)
	}
	if err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	var listed []string
	for _, r := range dig(kust, "resources").([]any) {
		listed = append(listed, r.(string))
		if _, err := os.Stat(filepath.Join(dir, r.(string))); err != nil {
			t.Errorf("kustomization.yaml: resource %s: %v", r, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "kubernetes", "*.yaml"))
	for _, f := range files {
		if rel := "kubernetes/" + filepath.Base(f); !slices.Contains(listed, rel) {
			t.Errorf("kustomization.yaml: %s is not among its resources", rel)
		}
	}
	generated := map[string]string{} // ConfigMap name → its first file, for the checks below
	for _, g := range dig(kust, "configMapGenerator").([]any) {
		for _, f := range dig(g, "files").([]any) {
			_, file, _ := strings.Cut(f.(string), "=")
			if file == "" {
				file = f.(string)
			}
			if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
				t.Errorf("kustomization.yaml: ConfigMap %s: %v", dig(g, "name"), err)
			}
			generated[dig(g, "name").(string)] = f.(string)
		}
	}

	dep := objs["Deployment/mcp-workbench"]
	if dep == nil {
		t.Fatalf("no Deployment mcp-workbench among %v", keys(objs))
	}
	if n, _ := dig(dep, "spec", "replicas").(int); n < 2 {
		t.Errorf("Deployment: %d replicas; want several", n)
	}
	pod := dig(dep, "spec", "template", "spec")
	c := dig(pod, "containers", 0)

	// The command line: the image's, with flags serve has.
	var args []string
	for _, a := range dig(c, "args").([]any) {
		args = append(args, a.(string))
	}
	_, stages := readDockerfile(t)
	var cmd []string
	_ = json.Unmarshal([]byte(stages[len(stages)-1].instruction("CMD")), &cmd)
	if !slices.Equal(args, cmd) {
		t.Errorf("Deployment args %q differ from the image's CMD %q", args, cmd)
	}
	port, configPath := checkServeArgs(t, "Deployment args", args, serveHelp(t))
	if p, _ := dig(c, "ports", 0, "containerPort").(int); p != port || dig(c, "ports", 0, "name") != "http" {
		t.Errorf("Deployment: container port %v (%v); serve --http listens on %d, and the probes name port http", p, dig(c, "ports", 0, "name"), port)
	}
	for probe, want := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/healthz"} {
		if got := dig(c, probe, "httpGet", "path"); got != want || dig(c, probe, "httpGet", "port") != "http" {
			t.Errorf("Deployment: %s GET %v on port %v; want %s on http", probe, got, dig(c, probe, "httpGet", "port"), want)
		}
	}
	for _, svc := range []string{"Service/mcp-workbench", "Service/mcp-workbench-pods"} {
		if got := dig(objs[svc], "spec", "ports", 0, "targetPort"); got != "http" {
			t.Errorf("%s: targetPort %v; want the container's port http", svc, got)
		}
		if dig(objs[svc], "spec", "selector", "app.kubernetes.io/name") != dig(dep, "spec", "template", "metadata", "labels", "app.kubernetes.io/name") {
			t.Errorf("%s does not select the Deployment's pods", svc)
		}
	}
	if dig(objs["Service/mcp-workbench-pods"], "spec", "clusterIP") != "None" {
		t.Error("Service mcp-workbench-pods is not headless: haproxy needs one address per pod")
	}
	if v, _ := dig(pod, "securityContext", "runAsNonRoot").(bool); !v || dig(c, "securityContext", "allowPrivilegeEscalation") != false || dig(c, "securityContext", "readOnlyRootFilesystem") != true {
		t.Error("Deployment: want runAsNonRoot, no privilege escalation and a read-only root file system")
	}
	if dig(c, "resources", "requests", "memory") == nil || dig(c, "resources", "limits", "memory") == nil {
		t.Error("Deployment: no memory request or limit")
	}
	env := map[string]string{}
	for _, e := range dig(c, "env").([]any) {
		env[dig(e, "name").(string)], _ = dig(e, "value").(string)
	}
	// The Go runtime's soft limit below the container's.
	limit, ok1 := byteSize(fmt.Sprint(dig(c, "resources", "limits", "memory")))
	soft, ok2 := byteSize(env["GOMEMLIMIT"])
	if !ok1 || !ok2 || soft >= limit {
		t.Errorf("Deployment: GOMEMLIMIT %q is not below limits.memory %v", env["GOMEMLIMIT"], dig(c, "resources", "limits", "memory"))
	}

	// Mounts: the configuration's folder from the generated ConfigMap;
	// the token store's folder from a Secret or a claim, read-only.
	mounts := map[string]string{} // volume → mount path
	for _, m := range dig(c, "volumeMounts").([]any) {
		mounts[dig(m, "name").(string)] = dig(m, "mountPath").(string)
	}
	volumes := map[string]any{}
	for _, v := range dig(pod, "volumes").([]any) {
		volumes[dig(v, "name").(string)] = v
	}
	mountOf := func(file string) (volume any, ok bool) {
		for name, p := range mounts {
			if path.Dir(file) == p {
				return volumes[name], true
			}
		}
		return nil, false
	}
	v, ok := mountOf(configPath)
	if cm, _ := dig(v, "configMap", "name").(string); !ok || !strings.HasSuffix(generated[cm], path.Base(configPath)+"=kubernetes/workbench-config.json") {
		t.Errorf("Deployment: %s is not kubernetes/workbench-config.json from the ConfigMap of kustomization.yaml (volume %v)", configPath, v)
	}
	tokens := env["MCP_WORKBENCH_TOKENS"]
	v, ok = mountOf(tokens)
	if !ok || (dig(v, "secret", "secretName") == nil && dig(v, "persistentVolumeClaim", "claimName") == nil) {
		t.Errorf("Deployment: the token store %q is not on a Secret or a claim every replica mounts (volume %v)", tokens, v)
	}

	// The configuration: valid as the workbench reads it, with every
	// ${VAR} given by the Deployment (its env, or the Secret's keys).
	secret := objs[fmt.Sprintf("Secret/%v", dig(c, "envFrom", 0, "secretRef", "name"))]
	if secret == nil {
		t.Fatalf("Deployment: envFrom names no Secret of the manifests")
	}
	given := map[string]string{}
	for k, v := range env {
		given[k] = v
	}
	for k := range dig(secret, "stringData").(map[string]any) {
		given[k] = "set-by-the-secret"
	}
	given["WB_PUBLIC_URL"] = "https://wb.example.com/mcp"
	given["WB_OAUTH_ISSUER"] = "https://idp.example.com"
	given["WB_STATE_KEY"] = "c3RhdGUta2V5LWZvci10aGUtZGVwbG95LXRlc3QtMzItYnl0ZXM="
	cfgFile := filepath.Join(dir, "kubernetes", "workbench-config.json")
	raw, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(string(raw), -1) {
		if _, ok := dig(secret, "stringData").(map[string]any)[m[1]]; !ok && env[m[1]] == "" {
			t.Errorf("workbench-config.json: ${%s} is set neither by the Deployment's env nor by Secret %v", m[1], dig(secret, "metadata", "name"))
		}
	}
	cfg, err := config.LoadWith(cfgFile, func(k string) (string, bool) { v, ok := given[k]; return v, ok })
	if err != nil {
		t.Fatalf("workbench-config.json: %v", err)
	}
	if len(cfg.Warnings) > 0 {
		t.Errorf("workbench-config.json: warnings: %q", cfg.Warnings)
	}
	var doc struct {
		HTTP struct {
			Auth   struct{ Tokens string }
			Limits struct{ ShutdownMs int }
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.HTTP.Auth.Tokens != tokens {
		t.Errorf("workbench-config.json: http.auth.tokens %q, but the Deployment mounts the token store at %q", doc.HTTP.Auth.Tokens, tokens)
	}
	// The grace period covers the preStop pause, limits.shutdownMs for the
	// calls in flight, and the servers' stop.
	grace, _ := dig(pod, "terminationGracePeriodSeconds").(int)
	pause := 0
	if cmd, ok := dig(c, "lifecycle", "preStop", "exec", "command").([]any); ok && len(cmd) == 2 && cmd[0] == "sleep" {
		pause, _ = strconv.Atoi(cmd[1].(string))
	}
	if doc.HTTP.Limits.ShutdownMs == 0 || grace*1000 <= pause*1000+doc.HTTP.Limits.ShutdownMs {
		t.Errorf("Deployment: terminationGracePeriodSeconds %d is not longer than the preStop pause (%d s) and limits.shutdownMs (%d)", grace, pause, doc.HTTP.Limits.ShutdownMs)
	}

	// haproxy: the generated ConfigMap of deploy/haproxy.cfg, whose
	// replicas are the headless Service's, by its full name.
	hcfg, err := os.ReadFile(filepath.Join(dir, "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := kust["namespace"].(string)
	want := fmt.Sprintf("mcp-workbench-pods.%s.svc.cluster.local:%d", ns, port)
	if !regexp.MustCompile(`(?m)^\s*server-template \S+ \d+ ` + regexp.QuoteMeta(want) + `\b`).Match(hcfg) {
		t.Errorf("haproxy.cfg: no server-template over %s", want)
	}
	hdep := objs["Deployment/mcp-workbench-haproxy"]
	if cm := dig(hdep, "spec", "template", "spec", "volumes", 0, "configMap", "name"); generated[fmt.Sprint(cm)] != "haproxy.cfg" {
		t.Errorf("Deployment mcp-workbench-haproxy mounts ConfigMap %v, not the one made of haproxy.cfg", cm)
	}
}

// byteSize reads a size as Kubernetes (512Mi, 1Gi) or GOMEMLIMIT (768MiB)
// write it, in bytes.
func byteSize(s string) (int64, bool) {
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n * u.n, err == nil
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// haproxyPath is haproxy's executable: the tests that use it fail (never
// skip) without it, saying how to install it.
func haproxyPath(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"haproxy", "/usr/sbin/haproxy"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Fatal("haproxy is not installed: apt-get install haproxy (.ci/run installs it)")
	return ""
}

// TestHAProxyConfig: haproxy accepts deploy/haproxy.cfg as it is, and the
// one the replica tests make of it.
func TestHAProxyConfig(t *testing.T) {
	bin := haproxyPath(t)
	file := filepath.Join(deployDir(t), "haproxy.cfg")
	out, err := exec.Command(bin, "-c", "-f", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Configuration file is valid") {
		t.Fatalf("haproxy -c -f deploy/haproxy.cfg: %v\n%s", err, out)
	}
	gen := writeHAProxyConfig(t, "127.0.0.1:1", []string{"127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:4"}, filepath.Join(t.TempDir(), "stats.sock"))
	out, err = exec.Command(bin, "-c", "-f", gen).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Configuration file is valid") || strings.Contains(string(out), "WARNING") {
		t.Fatalf("haproxy -c -f (the tests' config): %v\n%s", err, out)
	}
}

// TestProbesServed: the paths the Deployment probes answer 200 on a
// workbench serving the Kubernetes configuration's toolboxes, asked as the
// kubelet asks (Host: the pod's address and port).
func TestProbesServed(t *testing.T) {
	objs := readManifests(t)
	c := dig(objs["Deployment/mcp-workbench"], "spec", "template", "spec", "containers", 0)
	raw, err := os.ReadFile(filepath.Join(deployDir(t), "kubernetes", "workbench-config.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The same configuration without its auth: loopback serves without.
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	delete(cfg["http"].(map[string]any), "auth")
	delete(cfg["http"].(map[string]any), "publicUrl")
	t.Setenv("WB_STATE_KEY", "c3RhdGUta2V5LWZvci10aGUtZGVwbG95LXRlc3QtMzItYnl0ZXM=")
	rep := startReplica(t, writeConfig(t, cfg), fmt.Sprintf("wbprobe-%d", time.Now().UnixNano()), t.TempDir())
	for _, probe := range []string{"readinessProbe", "livenessProbe"} {
		p := dig(c, probe, "httpGet", "path").(string)
		req, _ := http.NewRequest("GET", "http://"+rep.addr+p, nil)
		req.Host = "10.1.2.3:8080" // what the kubelet sends: the pod's IP
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		cancel()
		if err != nil {
			t.Fatalf("%s GET %s: %v", probe, p, err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s GET %s (Host %s): %d %s; want 200", probe, p, req.Host, resp.StatusCode, body)
		}
	}
}
