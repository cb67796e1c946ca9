package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ---------------------------------------------------------------------------
// Locating the module.

// moduleRoot returns the directory of the module's go.mod, walking up from
// the test's working directory.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// goTool returns the go command, or skips the test without one.
func goTool(t testing.TB) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the import direction check needs the go command: %v", err)
	}
	return goBin
}

// sourceFile is a Go file of the module: its path relative to the module
// root, with slashes, and its contents.
type sourceFile struct {
	rel string
	src []byte
}

// moduleFiles returns every .go file of the module, skipping testdata,
// vendor, hidden (.x) and ignored (_x) directories and nested modules.
func moduleFiles(t testing.TB, root string) []sourceFile {
	t.Helper()
	var files []sourceFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p == root {
				return nil
			}
			if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module has its own rules
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, sourceFile{rel: filepath.ToSlash(rel), src: src})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("found no Go files in the module")
	}
	return files
}

// inTree reports whether the slash path rel is dir or lies under it.
func inTree(rel, dir string) bool {
	return rel == dir || strings.HasPrefix(rel, dir+"/")
}

// ---------------------------------------------------------------------------
// Import direction (design section 2).

// listPackage is the part of `go list -json` output the import check reads.
type listPackage struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Deps       []string
	Module     *struct {
		Path string
		Main bool
	}
	Error *struct{ Err string }
}

// pkgRef is a package as the rules see it.
type pkgRef struct {
	path string // import path
	rel  string // path inside the main module ("." for its root), "" outside it
	std  bool   // in the standard library
}

// pkgSet is a set of packages, with how a message names it.
type pkgSet struct {
	desc string
	has  func(pkgRef) bool
}

// exactly is the module package dir alone.
func exactly(dir string) pkgSet {
	return pkgSet{dir, func(r pkgRef) bool { return r.rel == dir }}
}

// tree is the module package dir and every package under it.
func tree(dir string) pkgSet {
	return pkgSet{dir + "/...", func(r pkgRef) bool { return r.rel != "" && inTree(r.rel, dir) }}
}

// below is every module package under dir, dir excluded.
func below(dir string) pkgSet {
	return pkgSet{dir + "/<sub>", func(r pkgRef) bool { return strings.HasPrefix(r.rel, dir+"/") }}
}

func anyOf(sets ...pkgSet) pkgSet {
	var descs []string
	for _, s := range sets {
		descs = append(descs, s.desc)
	}
	return pkgSet{strings.Join(descs, ", "), func(r pkgRef) bool {
		for _, s := range sets {
			if s.has(r) {
				return true
			}
		}
		return false
	}}
}

// moduleOutside is every module package outside the given sets.
func moduleOutside(allowed ...pkgSet) pkgSet {
	a := anyOf(allowed...)
	return pkgSet{"module packages other than " + a.desc, func(r pkgRef) bool { return r.rel != "" && !a.has(r) }}
}

// not is every module package outside s.
func not(s pkgSet) pkgSet {
	return pkgSet{"packages outside " + s.desc, func(r pkgRef) bool { return r.rel != "" && !s.has(r) }}
}

// replayBackends are the packages under replay/ other than the contract
// (replay/backend), the I/O engines (replay/ioengine) and the composition
// root (replay/setup): the backends, their decorators and their
// conformance suite.
var replayBackends = pkgSet{"replay's backends", func(r pkgRef) bool {
	return strings.HasPrefix(r.rel, "replay/") && !inTree(r.rel, "replay/backend") && !inTree(r.rel, "replay/ioengine") &&
		!inTree(r.rel, "replay/setup")
}}

// s3Client are the modules of the S3 tier's client and its histogram.
var s3Client = []string{"github.com/aws/aws-sdk-go-v2", "github.com/aws/smithy-go", "github.com/HdrHistogram/hdrhistogram-go"}

var nonStandard = pkgSet{"packages outside the standard library", func(r pkgRef) bool { return !r.std }}

// thirdPartyExcept is every package outside the standard library and the
// main module other than those of the given modules (import path
// prefixes).
func thirdPartyExcept(modules ...string) pkgSet {
	desc := "third-party packages"
	if len(modules) > 0 {
		desc += " other than " + strings.Join(modules, ", ")
	}
	return pkgSet{desc, func(r pkgRef) bool {
		if r.std || r.rel != "" {
			return false
		}
		for _, m := range modules {
			if r.path == m || strings.HasPrefix(r.path, m+"/") {
				return false
			}
		}
		return true
	}}
}

// importRule forbids the packages in pkgs to depend, directly or not, on
// any package in forbid.
type importRule struct {
	pkgs, forbid pkgSet
}

// importRules is design section 2 as a table: imports point down,
// cmd/* -> {sim, replay, report} -> trace -> schema. A rule about a package
// that does not exist yet holds trivially.
func importRules() []importRule {
	return []importRule{
		// schema is the leaf every package may import.
		{exactly("schema"), nonStandard},
		{tree("schema"), moduleOutside(tree("schema"))},
		// trace is the codec: within the module it sees only schema, and its
		// fio exporter places and names objects as kvreplay's layouts do.
		// It writes its files as every output is written (internal/outfile),
		// and words its parse errors as sim/reqtrace does (internal/parsemsg).
		{tree("trace"), moduleOutside(tree("schema"), tree("trace"), exactly("internal/extent"), exactly("internal/objname"),
			exactly("internal/outfile"), exactly("internal/syspath"), exactly("internal/parsemsg"))},
		// The codec links no zstd code: trace/zst registers the library and
		// the row encoder's block coder (internal/zstdblock), which the
		// mains import; what reads traces (the replay engine) has neither.
		{exactly("trace"), thirdPartyExcept()},
		{pkgSet{"trace/... but trace/zst", func(r pkgRef) bool {
			return inTree(r.rel, "trace") && r.rel != "trace/zst" && r.rel != "trace/internal/zstdblock"
		}}, exactly("trace/internal/zstdblock")},
		{tree("replay"), pkgSet{"zstd code (github.com/klauspost/compress, trace/zst, trace/internal/zstdblock)", func(r pkgRef) bool {
			return inTree(r.path, "github.com/klauspost/compress") || r.rel == "trace/zst" || r.rel == "trace/internal/zstdblock"
		}}},
		// The extent allocator and the object names are leaves: standard
		// library only.
		{exactly("internal/extent"), nonStandard},
		{exactly("internal/objname"), nonStandard},
		{exactly("internal/syspath"), nonStandard},
		{exactly("internal/parsemsg"), nonStandard},
		{exactly("internal/outfile"), moduleOutside(exactly("internal/syspath"))},
		{exactly("internal/outfile"), thirdPartyExcept()},
		// sim emits to a sink; the main wires a trace.Writer in.
		{tree("sim"), anyOf(tree("trace"), tree("replay"), tree("report"), tree("cmd"), tree("internal/cli"))},
		// replay never imports its own backends: the main picks them. It
		// sees them through the contract, replay/backend, and moves their
		// bytes through replay/ioengine's engines.
		{exactly("replay"), anyOf(replayBackends, tree("sim"), tree("report"), tree("cmd"))},
		{below("replay"), anyOf(tree("sim"), tree("report"), tree("cmd"))},
		// replay/setup is the composition root: it builds the backends and
		// the movers for a main, and only a main imports it.
		{moduleOutside(tree("cmd"), exactly("replay/setup")), exactly("replay/setup")},
		// The contract is a leaf: standard library only. A backend sees the
		// contract and nothing of the scheduler, the codec, the I/O engines
		// or the data generator.
		{exactly("replay/backend"), nonStandard},
		// The GPU tier loads the CUDA runtime through purego
		// (internal/cuda), the one other module a backend may reach.
		{replayBackends, anyOf(exactly("replay"), exactly("replay/ioengine"), tree("trace"), exactly("internal/uring"),
			exactly("internal/datagen"), thirdPartyExcept(append([]string{"golang.org/x/sys", "github.com/ebitengine/purego"}, s3Client...)...))},
		// The S3 tier reaches its client (aws-sdk-go-v2), and the
		// HdrHistogram of its time to first byte; no other backend does.
		{pkgSet{"replay's backends other than replay/s3", func(r pkgRef) bool { return replayBackends.has(r) && !inTree(r.rel, "replay/s3") }},
			pkgSet{"the S3 client", func(r pkgRef) bool { return !thirdPartyExcept(s3Client[:2]...).has(r) && !r.std && r.rel == "" }}},
		{exactly("internal/cuda"), thirdPartyExcept("github.com/ebitengine/purego")},
		// An I/O engine knows nothing of the scheduler or the trace.
		{exactly("replay/ioengine"), anyOf(exactly("replay"), replayBackends, tree("trace"), exactly("internal/datagen"))},
		// An engine that moves bytes between two backends' memories
		// itself (GPUDirect Storage) sees those backends, and still
		// nothing of the scheduler or the trace.
		{below("replay/ioengine"), anyOf(exactly("replay"), tree("trace"))},
		// report never links replay backends.
		{tree("report"), anyOf(below("replay"), tree("sim"), tree("cmd"))},
		// results is the one definition of every metric and threshold, for
		// kvreplay and kvreport alike: it sees schema, internal/hist and the
		// HdrHistogram module under it, never an engine, the codec or a main.
		{exactly("results"), moduleOutside(tree("schema"), exactly("internal/hist"))},
		{exactly("results"), thirdPartyExcept("github.com/HdrHistogram/hdrhistogram-go")},
		// internal is plumbing below the engines.
		{tree("internal"), anyOf(tree("cmd"), tree("sim"), tree("replay"), tree("report"))},
		// Mains are leaves: nothing imports them.
		{not(tree("cmd")), tree("cmd")},
	}
}

// decodeList reads the concatenated JSON objects of `go list -json`.
func decodeList(r io.Reader) ([]listPackage, error) {
	var pkgs []listPackage
	dec := json.NewDecoder(r)
	for {
		var p listPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// checkImports applies importRules to the packages of the main module in
// pkgs, the output of `go list -deps -json` (module packages and all their
// dependencies). It returns one line per violation, with the shortest
// import chain from the package to the forbidden dependency.
func checkImports(pkgs []listPackage) []string {
	modPath := ""
	byPath := make(map[string]*listPackage, len(pkgs))
	for i := range pkgs {
		p := &pkgs[i]
		byPath[p.ImportPath] = p
		if p.Module != nil && p.Module.Main && modPath == "" {
			modPath = p.Module.Path
		}
	}
	if modPath == "" {
		return []string{"go list reported no package of the main module"}
	}
	ref := func(importPath string) pkgRef {
		r := pkgRef{path: importPath}
		if p, ok := byPath[importPath]; ok {
			r.std = p.Standard
		} else {
			// Not listed (should not happen with -deps): guess as go does.
			first, _, _ := strings.Cut(importPath, "/")
			r.std = !strings.Contains(first, ".")
		}
		switch {
		case importPath == modPath:
			r.rel = "."
		case strings.HasPrefix(importPath, modPath+"/"):
			r.rel = strings.TrimPrefix(importPath, modPath+"/")
		}
		return r
	}
	name := func(importPath string) string {
		if r := ref(importPath); r.rel != "" {
			return r.rel
		}
		return importPath
	}
	// chain returns the shortest import path from -> ... -> to.
	chain := func(from, to string) string {
		prev := map[string]string{from: ""}
		queue := []string{from}
		for len(queue) > 0 && prev[to] == "" {
			cur := queue[0]
			queue = queue[1:]
			p := byPath[cur]
			if p == nil {
				continue
			}
			for _, imp := range p.Imports {
				if _, seen := prev[imp]; !seen {
					prev[imp] = cur
					queue = append(queue, imp)
				}
			}
		}
		if prev[to] == "" {
			return name(from) + " -> " + name(to)
		}
		var steps []string
		for at := to; at != ""; at = prev[at] {
			steps = append(steps, name(at))
		}
		slices.Reverse(steps)
		return strings.Join(steps, " -> ")
	}

	var out []string
	rules := importRules()
	for i := range pkgs {
		p := &pkgs[i]
		self := ref(p.ImportPath)
		if self.rel == "" {
			continue
		}
		for _, rule := range rules {
			if !rule.pkgs.has(self) {
				continue
			}
			for _, dep := range p.Deps {
				if rule.forbid.has(ref(dep)) {
					out = append(out, fmt.Sprintf("%s: %s must not depend on %s", chain(p.ImportPath, dep), rule.pkgs.desc, rule.forbid.desc))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestImportDirection(t *testing.T) {
	goBin := goTool(t)
	root := moduleRoot(t)
	cmd := exec.Command(goBin, "list", "-e", "-deps", "-json=ImportPath,Standard,Imports,Deps,Module,Error", "./...")
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs, err := decodeList(&stdout)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		if p.Error != nil {
			// Broken packages fail the build on their own; their listed
			// imports may be incomplete.
			t.Logf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
	}
	for _, v := range checkImports(pkgs) {
		t.Error(v)
	}
}

func TestCheckImportsReports(t *testing.T) {
	const mod = "github.com/kvbench/kvbench"
	main := `,"Module":{"Path":"` + mod + `","Main":true}`
	// sim reaches trace through internal/x; schema imports a third-party
	// package; replay imports its backend; the root imports a main.
	list := `
{"ImportPath":"fmt","Standard":true}
{"ImportPath":"github.com/klauspost/compress/zstd","Module":{"Path":"github.com/klauspost/compress"}}
{"ImportPath":"` + mod + `/schema","Imports":["fmt","github.com/klauspost/compress/zstd"],"Deps":["fmt","github.com/klauspost/compress/zstd"]` + main + `}
{"ImportPath":"` + mod + `/trace","Imports":["` + mod + `/schema"],"Deps":["fmt","` + mod + `/schema"]` + main + `}
{"ImportPath":"` + mod + `/internal/x","Imports":["` + mod + `/trace"],"Deps":["` + mod + `/schema","` + mod + `/trace"]` + main + `}
{"ImportPath":"` + mod + `/sim","Imports":["` + mod + `/internal/x"],"Deps":["` + mod + `/internal/x","` + mod + `/schema","` + mod + `/trace"]` + main + `}
{"ImportPath":"` + mod + `/replay/uring","Imports":["` + mod + `/schema"],"Deps":["` + mod + `/schema"]` + main + `}
{"ImportPath":"` + mod + `/replay","Imports":["` + mod + `/replay/uring"],"Deps":["` + mod + `/replay/uring","` + mod + `/schema"]` + main + `}
{"ImportPath":"` + mod + `/cmd/kvtrace","Imports":["` + mod + `/sim","` + mod + `/trace"],"Deps":["` + mod + `/sim","` + mod + `/trace"]` + main + `}
{"ImportPath":"` + mod + `","Imports":["` + mod + `/cmd/kvtrace"],"Deps":["` + mod + `/cmd/kvtrace"]` + main + `}
`
	pkgs, err := decodeList(strings.NewReader(list))
	if err != nil {
		t.Fatal(err)
	}
	got := checkImports(pkgs)
	want := []string{
		". -> cmd/kvtrace: packages outside cmd/... must not depend on cmd/...",
		"replay -> replay/uring: replay must not depend on replay's backends, sim/..., report/..., cmd/...",
		"schema -> github.com/klauspost/compress/zstd: schema must not depend on packages outside the standard library",
		"sim -> internal/x -> trace: sim/... must not depend on trace/..., replay/..., report/..., cmd/..., internal/cli/...",
	}
	if !slices.Equal(got, want) {
		t.Errorf("checkImports =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The clean part alone has no violation.
	var clean []listPackage
	for _, p := range pkgs {
		if strings.HasSuffix(p.ImportPath, "/trace") || strings.HasSuffix(p.ImportPath, "/replay/uring") || p.Standard || p.Module != nil && !p.Module.Main {
			clean = append(clean, p)
		}
	}
	if v := checkImports(clean); len(v) != 0 {
		t.Errorf("clean packages reported: %q", v)
	}
}

// TestCheckImportsZstd: neither the codec nor the replay engine links zstd
// code, the library or the row encoder's block coder (trace/zst, which the
// mains import, links both).
func TestCheckImportsZstd(t *testing.T) {
	const mod = "github.com/kvbench/kvbench"
	const zstd = "github.com/klauspost/compress/zstd"
	const huff0 = "github.com/klauspost/compress/huff0"
	const block = mod + "/trace/internal/zstdblock"
	main := `,"Module":{"Path":"` + mod + `","Main":true}`
	list := `
{"ImportPath":"fmt","Standard":true}
{"ImportPath":"` + zstd + `","Module":{"Path":"github.com/klauspost/compress"}}
{"ImportPath":"` + huff0 + `","Module":{"Path":"github.com/klauspost/compress"}}
{"ImportPath":"` + mod + `/schema","Imports":["fmt"],"Deps":["fmt"]` + main + `}
{"ImportPath":"` + block + `","Imports":["` + huff0 + `"],"Deps":["` + huff0 + `"]` + main + `}
{"ImportPath":"` + mod + `/trace","Imports":["` + mod + `/schema","` + zstd + `","` + block + `"],"Deps":["fmt","` + zstd + `","` + huff0 + `","` + block + `","` + mod + `/schema"]` + main + `}
{"ImportPath":"` + mod + `/trace/zst","Imports":["` + mod + `/trace","` + zstd + `","` + block + `"],"Deps":["fmt","` + zstd + `","` + huff0 + `","` + block + `","` + mod + `/schema","` + mod + `/trace"]` + main + `}
{"ImportPath":"` + mod + `/replay","Imports":["` + mod + `/trace"],"Deps":["fmt","` + zstd + `","` + huff0 + `","` + block + `","` + mod + `/schema","` + mod + `/trace"]` + main + `}
`
	pkgs, err := decodeList(strings.NewReader(list))
	if err != nil {
		t.Fatal(err)
	}
	const replayRule = ": replay/... must not depend on zstd code (github.com/klauspost/compress, trace/zst, trace/internal/zstdblock)"
	want := []string{
		"replay -> trace -> " + zstd + replayRule,
		"replay -> trace -> trace/internal/zstdblock -> " + huff0 + replayRule,
		"replay -> trace -> trace/internal/zstdblock" + replayRule,
		"trace -> " + zstd + ": trace must not depend on third-party packages",
		"trace -> trace/internal/zstdblock -> " + huff0 + ": trace must not depend on third-party packages",
		"trace -> trace/internal/zstdblock: trace/... but trace/zst must not depend on trace/internal/zstdblock",
	}
	if got := checkImports(pkgs); !slices.Equal(got, want) {
		t.Errorf("checkImports =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCheckImportsResults: results may depend on schema,
// internal/hist and HdrHistogram, and on nothing else of the module or
// outside the standard library.
func TestCheckImportsResults(t *testing.T) {
	const mod = "github.com/kvbench/kvbench"
	const hdr = "github.com/HdrHistogram/hdrhistogram-go"
	main := `,"Module":{"Path":"` + mod + `","Main":true}`
	base := `
{"ImportPath":"fmt","Standard":true}
{"ImportPath":"` + hdr + `","Module":{"Path":"` + hdr + `"}}
{"ImportPath":"github.com/klauspost/compress/zstd","Module":{"Path":"github.com/klauspost/compress"}}
{"ImportPath":"` + mod + `/schema","Imports":["fmt"],"Deps":["fmt"]` + main + `}
{"ImportPath":"` + mod + `/internal/hist","Imports":["` + mod + `/schema","` + hdr + `"],"Deps":["fmt","` + hdr + `","` + mod + `/schema"]` + main + `}
{"ImportPath":"` + mod + `/trace","Imports":["` + mod + `/schema"],"Deps":["fmt","` + mod + `/schema"]` + main + `}
{"ImportPath":"` + mod + `/report","Imports":["` + mod + `/results"],"Deps":["fmt","` + hdr + `","` + mod + `/internal/hist","` + mod + `/results","` + mod + `/schema"]` + main + `}
`
	for _, tt := range []struct {
		name, imports string
		want          []string
	}{
		{"allowed", `"fmt","` + mod + `/schema","` + mod + `/internal/hist"`, nil},
		{"the codec", `"` + mod + `/internal/hist","` + mod + `/trace"`, []string{
			"results -> trace: results must not depend on module packages other than schema/..., internal/hist"}},
		{"zstd", `"` + mod + `/internal/hist","github.com/klauspost/compress/zstd"`, []string{
			"results -> github.com/klauspost/compress/zstd: results must not depend on third-party packages other than " + hdr}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The imports and their dependencies, as go list -deps gives
			// them.
			deps := append(strings.Split(tt.imports, ","), `"fmt"`, `"`+hdr+`"`, `"`+mod+`/schema"`)
			slices.Sort(deps)
			deps = slices.Compact(deps)
			list := base + `{"ImportPath":"` + mod + `/results","Imports":[` + tt.imports + `],"Deps":[` + strings.Join(deps, ",") + `]` + main + "}\n"
			pkgs, err := decodeList(strings.NewReader(list))
			if err != nil {
				t.Fatal(err)
			}
			if got := checkImports(pkgs); !slices.Equal(got, tt.want) {
				t.Errorf("checkImports =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// ---------------------------------------------------------------------------
// No os.Exit, log.Fatal* or log.Panic* outside cmd/.

// exitFuncs are the functions that end the process, by import path.
func exitFuncs() map[string][]string {
	return map[string][]string{
		"os":  {"Exit"},
		"log": {"Fatal", "Fatalf", "Fatalln", "Panic", "Panicf", "Panicln"},
	}
}

// importNames returns the names under which file f imports the package
// path, and whether it dot-imports it.
func importNames(f *ast.File, importPath string) (names []string, dot bool) {
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil || p != importPath {
			continue
		}
		switch {
		case imp.Name == nil:
			names = append(names, path.Base(importPath))
		case imp.Name.Name == ".":
			dot = true
		case imp.Name.Name != "_":
			names = append(names, imp.Name.Name)
		}
	}
	return names, dot
}

// checkNoExit returns "file:line: pkg.Func" for every reference to a
// function of exitFuncs in f, through the file's own name for the package.
func checkNoExit(fset *token.FileSet, f *ast.File) []string {
	var out []string
	for importPath, funcs := range exitFuncs() {
		names, dot := importNames(f, importPath)
		if len(names) == 0 && !dot {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				// A package-qualified name: x is unresolved (Obj == nil)
				// unless a local declaration shadows the import.
				if x, ok := n.X.(*ast.Ident); ok && x.Obj == nil && slices.Contains(names, x.Name) && slices.Contains(funcs, n.Sel.Name) {
					out = append(out, fmt.Sprintf("%s: %s.%s", fset.Position(n.Pos()), importPath, n.Sel.Name))
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && dot && id.Obj == nil && slices.Contains(funcs, id.Name) {
					out = append(out, fmt.Sprintf("%s: %s.%s", fset.Position(n.Pos()), importPath, id.Name))
				}
			}
			return true
		})
	}
	slices.Sort(out)
	return out
}

func TestNoExitOutsideCmd(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	for _, sf := range moduleFiles(t, root) {
		if inTree(sf.rel, "cmd") || strings.HasSuffix(sf.rel, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, sf.rel, sf.src, 0)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		for _, v := range checkNoExit(fset, f) {
			t.Errorf("%s: only mains in cmd/ may end the process; return an error instead", v)
		}
	}
}

func TestCheckNoExitReports(t *testing.T) {
	const src = `package p

import (
	xos "os"
	"log"
	. "os"
)

func a() { xos.Exit(1) }
func b() { log.Fatalf("x") }
func c() { f := log.Panicln; f() }
func d() { Exit(2) }
func e() { var log struct{ Fatal func() }; log.Fatal() }
func g() { xos.Getenv("X") }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := checkNoExit(fset, f)
	want := []string{
		"p.go:10:12: log.Fatalf",
		"p.go:11:17: log.Panicln",
		"p.go:12:12: os.Exit",
		"p.go:9:12: os.Exit",
	}
	if !slices.Equal(got, want) {
		t.Errorf("checkNoExit =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	clean, err := parser.ParseFile(fset, "q.go", "package q\n\nimport \"os\"\n\nfunc f() string { return os.Getenv(\"X\") }\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	if v := checkNoExit(fset, clean); len(v) != 0 {
		t.Errorf("clean file reported: %q", v)
	}
}

// ---------------------------------------------------------------------------
// gofmt.

// checkGofmt reports whether src is formatted as gofmt formats it, and why
// not.
func checkGofmt(name string, src []byte) string {
	formatted, err := format.Source(src)
	if err != nil {
		return fmt.Sprintf("%s: does not parse: %v", name, err)
	}
	if !bytes.Equal(formatted, src) {
		return fmt.Sprintf("%s: not gofmt-clean (run gofmt -w %s)", name, name)
	}
	return ""
}

func TestGofmt(t *testing.T) {
	root := moduleRoot(t)
	for _, sf := range moduleFiles(t, root) {
		if msg := checkGofmt(sf.rel, sf.src); msg != "" {
			t.Error(msg)
		}
	}
}

func TestCheckGofmtReports(t *testing.T) {
	if msg := checkGofmt("ok.go", []byte("package p\n\nfunc f() {}\n")); msg != "" {
		t.Errorf("clean source reported: %s", msg)
	}
	if msg := checkGofmt("bad.go", []byte("package p\nfunc f(){ }\n")); !strings.HasPrefix(msg, "bad.go: not gofmt-clean") {
		t.Errorf("unformatted source: %q", msg)
	}
	if msg := checkGofmt("broken.go", []byte("package p\nfunc {\n")); !strings.HasPrefix(msg, "broken.go: does not parse") {
		t.Errorf("broken source: %q", msg)
	}
}

// ---------------------------------------------------------------------------
// fmt.Errorf wraps errors with %w.

// stringLit returns the value of a string literal or a concatenation of
// string literals.
func stringLit(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok1 := stringLit(e.X)
		y, ok2 := stringLit(e.Y)
		return x + y, ok1 && ok2
	case *ast.ParenExpr:
		return stringLit(e.X)
	}
	return "", false
}

// hasWrapVerb reports whether the format holds a %w verb ("%%w" is not one).
func hasWrapVerb(format string) bool {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0123456789.*[]", format[i]) >= 0 {
			i++
		}
		if i < len(format) && format[i] == 'w' {
			return true
		}
	}
	return false
}

// errorName returns the name of an argument that by its name holds an
// error: an identifier or field named err or ending in Err or err
// (closeErr, werr, e.Err), but not stderr.
func errorName(e ast.Expr) (string, bool) {
	var name string
	switch e := e.(type) {
	case *ast.Ident:
		name = e.Name
	case *ast.SelectorExpr:
		name = e.Sel.Name
	default:
		return "", false
	}
	if strings.EqualFold(name, "stderr") {
		return "", false
	}
	return name, strings.HasSuffix(name, "err") || strings.HasSuffix(name, "Err")
}

// checkErrorf returns "file:line: ..." for every fmt.Errorf call whose
// literal format has no %w while an argument is, by its name, an error. A
// format that is not a literal is not checked.
func checkErrorf(fset *token.FileSet, f *ast.File) []string {
	names, dot := importNames(f, "fmt")
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) < 2 {
			return true
		}
		switch fun := call.Fun.(type) {
		case *ast.SelectorExpr:
			x, ok := fun.X.(*ast.Ident)
			if !ok || fun.Sel.Name != "Errorf" || !slices.Contains(names, x.Name) || x.Obj != nil {
				return true
			}
		case *ast.Ident:
			if !dot || fun.Name != "Errorf" || fun.Obj != nil {
				return true
			}
		default:
			return true
		}
		format, ok := stringLit(call.Args[0])
		if !ok || hasWrapVerb(format) {
			return true
		}
		for _, arg := range call.Args[1:] {
			if name, isErr := errorName(arg); isErr {
				pos := fset.Position(call.Pos())
				out = append(out, fmt.Sprintf("%s:%d: fmt.Errorf formats %s without %%w", pos.Filename, pos.Line, name))
				break
			}
		}
		return true
	})
	return out
}

func TestErrorfWraps(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	for _, sf := range moduleFiles(t, root) {
		f, err := parser.ParseFile(fset, sf.rel, sf.src, 0)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		for _, v := range checkErrorf(fset, f) {
			t.Errorf("%s: wrap the error with %%w so errors.Is and errors.As see it", v)
		}
	}
}

func TestCheckErrorfReports(t *testing.T) {
	const src = `package p

import (
	"errors"
	f "fmt"
	"os"
)

type wrapper struct{ Err error }

func g(err, closeErr error, w wrapper, name string) []error {
	return []error{
		f.Errorf("open %s: %v", name, err),
		f.Errorf("close: %s", closeErr),
		f.Errorf("wrapped: " + "%v", w.Err),
		f.Errorf("percent: 100%%w %v", err),
		f.Errorf("ok: %w", err),
		f.Errorf("ok: %[1]s: %[2]w", name, err),
		f.Errorf("ok: %s", name),
		f.Errorf("ok: %v", os.Stderr),
		errors.New("ok"),
	}
}
`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := checkErrorf(fset, file)
	want := []string{
		"p.go:13: fmt.Errorf formats err without %w",
		"p.go:14: fmt.Errorf formats closeErr without %w",
		"p.go:15: fmt.Errorf formats Err without %w",
		"p.go:16: fmt.Errorf formats err without %w",
	}
	if !slices.Equal(got, want) {
		t.Errorf("checkErrorf =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for format, want := range map[string]bool{"%w": true, "%+w": true, "%[2]w": true, "%%w": false, "%v": false, "": false, "%": false, "%%%w": true} {
		if got := hasWrapVerb(format); got != want {
			t.Errorf("hasWrapVerb(%q) = %v, want %v", format, got, want)
		}
	}
}
