package devenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// pgRunner runs PostgreSQL programs, as the postgres user when we are root
// (the server refuses to run as root).
type pgRunner struct {
	binDir string
	cred   *syscall.Credential // nil: run as ourselves
	env    []string
}

// newPGRunner finds the binaries and, when uid is 0, the postgres user.
func newPGRunner(binDir string) (*pgRunner, error) {
	dir, err := findPGBinDir(binDir)
	if err != nil {
		return nil, err
	}
	r := &pgRunner{binDir: dir, env: os.Environ()}
	if os.Getuid() != 0 {
		return r, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs a postgres user to run PostgreSQL as: %w", err)
	}
	r.cred, err = credential(u)
	if err != nil {
		return nil, err
	}
	r.env = append(r.env, "HOME="+u.HomeDir, "USER=postgres", "LOGNAME=postgres")
	return r, nil
}

// hasLibrary reports whether the server's library folder (beside its bin
// folder, as Debian and PGDG lay it out) holds the shared library name.
func (r *pgRunner) hasLibrary(name string) bool {
	_, err := os.Stat(filepath.Join(filepath.Dir(r.binDir), "lib", name+".so"))
	return err == nil
}

// credential converts a user to the ids exec needs.
func credential(u *user.User) (*syscall.Credential, error) {
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("parse uid of %s: %w", u.Username, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("parse gid of %s: %w", u.Username, err)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	ids, _ := u.GroupIds()
	for _, id := range ids {
		if g, err := strconv.ParseUint(id, 10, 32); err == nil {
			cred.Groups = append(cred.Groups, uint32(g))
		}
	}
	return cred, nil
}

// command builds a command for the named PostgreSQL program, run in dir.
func (r *pgRunner) command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(r.binDir, name), args...)
	cmd.Dir = dir
	cmd.Env = r.env
	if r.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	}
	return cmd
}

// run runs a PostgreSQL program and folds its output into any error.
func (r *pgRunner) run(ctx context.Context, dir, name string, args ...string) error {
	out, err := r.command(ctx, dir, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// prepareDir creates dir and, when running as another user, checks that user
// can reach it and hands it over.
func (r *pgRunner) prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	if r.cred == nil {
		return nil
	}
	if err := checkTraversable(dir, r.cred); err != nil {
		return err
	}
	if err := os.Chown(dir, int(r.cred.Uid), int(r.cred.Gid)); err != nil {
		return fmt.Errorf("chown data dir to postgres: %w", err)
	}
	return nil
}

// checkTraversable reports a clear error when a parent of dir cannot be
// searched by the user in cred.
func checkTraversable(dir string, cred *syscall.Credential) error {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("check data dir parents: %w", err)
		}
		if !canSearch(fi, cred) {
			return fmt.Errorf("data dir %s is unreachable for the postgres user (uid %d): %s has mode %s; "+
				"choose a data dir under a directory it can traverse (e.g. /tmp) or chmod o+x %s",
				dir, cred.Uid, d, fi.Mode().Perm(), d)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// canSearch says whether the user in cred may traverse the directory fi.
func canSearch(fi fs.FileInfo, cred *syscall.Credential) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := fi.Mode().Perm()
	if st.Uid == cred.Uid {
		return perm&0o100 != 0
	}
	inGroup := st.Gid == cred.Gid
	for _, g := range cred.Groups {
		inGroup = inGroup || st.Gid == g
	}
	if inGroup {
		return perm&0o010 != 0
	}
	return perm&0o001 != 0
}

// findPGBinDir returns dir if given, else the first directory holding initdb
// and pg_ctl among: pg_config --bindir, /usr/lib/postgresql/*/bin (newest
// first), the PATH.
func findPGBinDir(dir string) (string, error) {
	if dir != "" {
		if hasPGBins(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("no initdb and pg_ctl in %s: %w", dir, ErrNotInstalled)
	}
	var candidates []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	candidates = append(candidates, debianBinDirs()...)
	if p, err := exec.LookPath("initdb"); err == nil {
		candidates = append(candidates, filepath.Dir(p))
	}
	for _, c := range candidates {
		if hasPGBins(c) {
			return c, nil
		}
	}
	return "", fmt.Errorf("find PostgreSQL initdb and pg_ctl: %w", ErrNotInstalled)
}

// debianBinDirs lists /usr/lib/postgresql/*/bin, newest major version first.
func debianBinDirs() []string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	major := func(d string) int {
		v := filepath.Base(filepath.Dir(d))
		n, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
		return n
	}
	sort.Slice(dirs, func(i, j int) bool { return major(dirs[i]) > major(dirs[j]) })
	return dirs
}

// hasPGBins says whether dir holds the programs StartPostgres runs.
func hasPGBins(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// postmasterAlive says whether pid is a live postgres process. Where /proc
// exists it counts zombies (left when nothing reaps the daemonised server) and
// recycled pids as dead; elsewhere it probes with signal 0.
func postmasterAlive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) && procMounted() {
		return false
	}
	if err != nil {
		err := syscall.Kill(pid, 0)
		return err == nil || errors.Is(err, syscall.EPERM)
	}
	// The format is "pid (comm) state ...".
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open || end+2 >= len(stat) {
		return false
	}
	comm := string(stat[open+1 : end])
	return (comm == "postgres" || comm == "postmaster") && stat[end+2] != 'Z'
}

// procMounted says whether /proc lists processes.
func procMounted() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// removeStalePID deletes the postmaster.pid of a server that is gone. The
// server would remove it itself, unless the dead pid is a zombie or was
// recycled, which it cannot tell from a live postmaster.
func removeStalePID(dataDir string) error {
	err := os.Remove(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale postmaster.pid: %w", err)
	}
	return nil
}

// postmasterPort returns the port of the server running on dataDir, or
// ok=false when none is. A postmaster.pid left by a dead server is removed.
func postmasterPort(dataDir string) (port int, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read postmaster.pid: %w", err)
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) < 4 {
		return 0, false, nil // being written or truncated; treat as not running
	}
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 0 {
		return 0, false, nil
	}
	if !postmasterAlive(pid) {
		return 0, false, removeStalePID(dataDir)
	}
	port, err = strconv.Atoi(strings.TrimSpace(lines[3]))
	if err != nil {
		return 0, false, fmt.Errorf("parse port in postmaster.pid: %w", err)
	}
	return port, true, nil
}

// PGTool is the path of a PostgreSQL program (pg_dump, psql) beside the
// server programs StartPostgres runs, of the same version.
func PGTool(name string) (string, error) {
	dir, err := findPGBinDir("")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}
