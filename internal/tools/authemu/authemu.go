// Package authemu runs the Firebase Auth emulator from the Firebase CLI
// (npm firebase-tools) for tests and the local demo, in its own process
// group, and mints real ID tokens through its REST sign-up.
package authemu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/firebase"
	"github.com/tallycounters/tally/internal/tools/npmci"
	"github.com/tallycounters/tally/internal/tools/proc"
)

// EnvHost is where the Firebase Admin SDK, and the demo page, find the
// emulator.
const EnvHost = "FIREBASE_AUTH_EMULATOR_HOST"

// InstallHelp says how to get the Firebase CLI.
const InstallHelp = `tally's sign-in tests and local stack use the Auth emulator of the Firebase CLI ` +
	`(npm firebase-tools, which needs Node.js and npm): tally installs the version it pins ` +
	`(internal/tools/firebase in the repository) itself, once per machine, when npm is on the PATH; ` +
	`otherwise install Node.js 20 or later with npm (docs/prerequisites.md in the repository says how, ` +
	`by system), or "npm install -g firebase-tools@15", or set TALLY_FIREBASE to the firebase command.`

// npmFlags leave out the CLI's optional packages: re2, which the hosting
// emulator uses and the Auth emulator does not, is built from C++ source
// for minutes where no prebuilt binary can be fetched.
var npmFlags = []string{"--omit=optional"}

const what = "the Firebase CLI (for its Auth emulator)"

// Locate finds the firebase command: TALLY_FIREBASE; else the version
// tally pins, installed first with npm if it is not yet (once per machine,
// however many callers ask at the same time): in the repository's
// internal/tools/firebase when run inside it, else in the machine's cache from the
// pins this binary carries; else firebase on the PATH. It stops waiting
// on another process's install when ctx ends.
func Locate(ctx context.Context, log io.Writer) (string, error) {
	if p := os.Getenv("TALLY_FIREBASE"); p != "" {
		return p, nil
	}
	if err := nodeRunsPins(ctx); err != nil {
		return "", err
	}
	bin := filepath.Join(".bin", "firebase")
	var err error
	if dir := npmci.Dir(filepath.Join("internal", "tools", "firebase")); dir != "" {
		if _, err = Install(ctx, dir, log); err == nil {
			return filepath.Join(dir, "node_modules", bin), nil
		}
	} else {
		var modules string
		if modules, _, err = npmci.InstallPins(ctx, firebase.Pins, "firebase", bin, what, log, npmFlags...); err == nil {
			return filepath.Join(modules, bin), nil
		}
	}
	if !errors.Is(err, npmci.ErrNoNPM) {
		return "", fmt.Errorf("authemu: install %s: %w.\n%s", what, err, InstallHelp)
	}
	if p, err := exec.LookPath("firebase"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("authemu: cannot find the Firebase CLI.\n%s", InstallHelp)
}

// Install installs the Firebase CLI pinned in dir (its package-lock.json)
// into dir/node_modules with "npm ci", unless it is there already, and says
// whether it did: once, however many processes ask at the same time.
func Install(ctx context.Context, dir string, log io.Writer) (installed bool, err error) {
	installed, err = npmci.Install(ctx, dir, filepath.Join(".bin", "firebase"), what, log, npmFlags...)
	if err != nil && !errors.Is(err, npmci.ErrNoNPM) {
		err = fmt.Errorf("install the Firebase CLI: %w", err)
	}
	return installed, err
}

// Emulator is a running Auth emulator.
type Emulator struct {
	Host  string // host:port, the value for FIREBASE_AUTH_EMULATOR_HOST
	cmd   *exec.Cmd
	group *proc.Group
	dir   string
	done  chan struct{}
}

// Start runs the Auth emulator for project on free loopback ports (its hub
// and logging ports too, so that runs never collide) and returns once it
// answers.
func Start(ctx context.Context, project string, output io.Writer) (*Emulator, error) {
	return StartOn(ctx, project, 0, output)
}

// StartOn is Start with the Auth emulator on the loopback port given (0:
// a free one), which an app on a phone emulator is told, as
// useEmulator's; its hub and logging ports are free ones still.
func StartOn(ctx context.Context, project string, port int, output io.Writer) (*Emulator, error) {
	bin, err := Locate(ctx, os.Stderr) // how an install goes is said whatever becomes of output
	if err != nil {
		return nil, err
	}
	// A free port is picked by closing it again: another process may take
	// it before the CLI binds it. The CLI then exits at once; try again on
	// other ports.
	for attempt := 1; ; attempt++ {
		e, err := start(ctx, bin, project, port, output)
		if err == nil || !errors.Is(err, errExited) || attempt == 3 {
			return e, err
		}
	}
}

// readyWithin bounds the Auth emulator's start: seconds on an idle
// machine, and start returns as soon as it answers or its CLI exits; the
// bound is for a machine many times slower, or a CLI that hangs.
const readyWithin = 10 * time.Minute

var errExited = errors.New("authemu: the Firebase CLI exited before its Auth emulator was ready")

// start makes one attempt of Start.
func start(ctx context.Context, bin, project string, port int, output io.Writer) (*Emulator, error) {
	ports := make([]int, 3)
	for i := range ports {
		var err error
		if ports[i], err = emulator.FreePort("127.0.0.1"); err != nil {
			return nil, err
		}
	}
	if port > 0 {
		ports[0] = port
	}
	dir, err := os.MkdirTemp("", "tally-auth-")
	if err != nil {
		return nil, err
	}
	conf, _ := json.Marshal(map[string]any{"emulators": map[string]any{
		"auth":    map[string]any{"host": "127.0.0.1", "port": ports[0]},
		"hub":     map[string]any{"host": "127.0.0.1", "port": ports[1]},
		"logging": map[string]any{"host": "127.0.0.1", "port": ports[2]},
		"ui":      map[string]any{"enabled": false},
	}})
	if err := os.WriteFile(filepath.Join(dir, "firebase.json"), conf, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.Command(bin, "emulators:start", "--only", "auth", "--project", project)
	cmd.Dir = dir
	// Each CLI gets its own temporary directory: the CLI keeps a file there
	// per project (its hub's locator), and two CLIs that start at once for
	// one project can read each other's half-written file and exit.
	cmd.Env = append(os.Environ(), "FIREBASE_CLI_DISABLE_UPDATE_CHECK=true", "CI=true", "TMPDIR="+dir)
	said := &emulator.Tail{Marker: readyLine}
	cmd.Stdout = said
	if output != nil {
		cmd.Stdout = io.MultiWriter(output, said)
	}
	cmd.Stderr = cmd.Stdout
	group, err := proc.Start(cmd)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("authemu: start %s: %w", bin, err)
	}
	e := &Emulator{Host: "127.0.0.1:" + strconv.Itoa(ports[0]), cmd: cmd, group: group, dir: dir, done: make(chan struct{})}
	go func() { cmd.Wait(); close(e.done) }()
	ctx, cancel := context.WithTimeoutCause(ctx, readyWithin, fmt.Errorf("not ready within %v of its start", readyWithin))
	defer cancel()
	for {
		if said.Marked() && answers(e.Host) {
			return e, nil
		}
		select {
		case <-e.done:
			err := fmt.Errorf("%w%s%s", errExited, quoted(said.String()), logTail(dir))
			os.RemoveAll(dir)
			return nil, err
		case <-ctx.Done():
			e.Stop()
			return nil, fmt.Errorf("authemu: the Firebase CLI (pid %d) was running but its Auth emulator did not answer at %s: %w",
				cmd.Process.Pid, e.Host, context.Cause(ctx))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// readyLine is what the CLI prints once its emulators serve. Until then
// an answer on the port may be another process's, one that took the port
// after it was picked free (the CLI then exits and Start tries again).
const readyLine = "All emulators ready"

// answers says whether the Auth emulator answers at host: its root says
// it is ready.
func answers(host string) bool {
	client := &http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get("http://" + host + "/")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var root struct {
		AuthEmulator struct{ Ready bool }
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&root) == nil && root.AuthEmulator.Ready
}

// quoted is "" or "; it said:" and what the CLI said last.
func quoted(said string) string {
	if said = strings.TrimSpace(said); said == "" {
		return ""
	}
	return "; it said:\n" + said
}

// logTail is the end of the CLI's debug log in dir, to say why it exited.
func logTail(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "firebase-debug.log"))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return "; the end of its firebase-debug.log:\n" + strings.Join(lines[max(0, len(lines)-15):], "\n")
}

// Stop ends the emulator's process group and waits for it.
func (e *Emulator) Stop() {
	e.group.Terminate()
	select {
	case <-e.done:
	case <-time.After(10 * time.Second):
		e.group.Kill()
		<-e.done
	}
	os.RemoveAll(e.dir)
}

var (
	sharedOnce sync.Once
	shared     *Emulator
	sharedErr  error
)

// Shared is one Auth emulator for the whole test binary, started on first
// use, for project; StopShared ends it. With FIREBASE_AUTH_EMULATOR_HOST
// already set, that emulator is used.
func Shared(project string) (string, error) {
	if h := os.Getenv(EnvHost); h != "" {
		return h, nil
	}
	sharedOnce.Do(func() {
		out := io.Discard
		if os.Getenv("TALLY_EMULATOR_LOG") != "" {
			out = os.Stderr
		}
		shared, sharedErr = Start(context.Background(), project, out)
	})
	if sharedErr != nil {
		return "", sharedErr
	}
	return shared.Host, nil
}

// StopShared stops the emulator Shared started, if any.
func StopShared() {
	if shared != nil {
		shared.Stop()
	}
}

// User is a user signed up on the emulator.
type User struct {
	UID, Email, IDToken string
}

// SignUp creates a user with email and password on the emulator at host
// and returns its ID token, as a web app's sign-up would.
func SignUp(host, email, password string) (User, error) {
	return account(host, "signUp", email, password)
}

// SignIn signs the user with email and password in on the emulator at
// host, creating it first if there is none, and returns its ID token.
func SignIn(host, email, password string) (User, error) {
	u, err := account(host, "signUp", email, password)
	if errors.Is(err, errEmailExists) {
		u, err = account(host, "signInWithPassword", email, password)
	}
	return u, err
}

// SignInAnonymously signs a new anonymous user in on the emulator at
// host, as Firebase's signInAnonymously does, and returns its ID token.
func SignInAnonymously(host string) (User, error) {
	return account(host, "signUp", "", "")
}

var errEmailExists = errors.New("EMAIL_EXISTS")

// account calls the Identity Toolkit method (signUp, signInWithPassword)
// of the emulator at host for email and password; signUp with neither
// makes an anonymous user.
func account(host, method, email, password string) (User, error) {
	req := map[string]any{"returnSecureToken": true}
	if email != "" {
		req["email"], req["password"] = email, password
	}
	body, _ := json.Marshal(req)
	resp, err := http.Post("http://"+host+"/identitytoolkit.googleapis.com/v1/accounts:"+method+"?key=fake-api-key",
		"application/json", bytes.NewReader(body))
	if err != nil {
		return User{}, fmt.Errorf("authemu: sign in %s: %w", email, err)
	}
	defer resp.Body.Close()
	var out struct {
		LocalID, Email, IDToken string
		Error                   struct{ Message string }
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	switch {
	case strings.HasPrefix(out.Error.Message, errEmailExists.Error()):
		return User{}, errEmailExists
	case out.Error.Message != "":
		return User{}, fmt.Errorf("authemu: sign in %s: %s", email, out.Error.Message)
	case err != nil || resp.StatusCode != http.StatusOK || out.IDToken == "":
		return User{}, fmt.Errorf("authemu: sign in %s: %s %v", email, resp.Status, err)
	}
	return User{UID: out.LocalID, Email: out.Email, IDToken: out.IDToken}, nil
}
