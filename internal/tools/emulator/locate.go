package emulator

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// jarName is the emulator inside the Cloud SDK's platform/cloud-firestore-emulator.
const (
	jarName  = "cloud-firestore-emulator.jar"
	mainName = "com.google.cloud.datastore.emulator.firestore.CloudFirestore"
	subdir   = "platform/cloud-firestore-emulator"
)

// InstallHelp says how to get what Start needs.
const InstallHelp = `tally runs the real Cloud Firestore emulator from the Google Cloud CLI, ` +
	`which needs Java 11 or newer. Install the emulator with ` +
	`"gcloud components install cloud-firestore-emulator", or, where the CLI came ` +
	`from Google's apt repository, "apt-get install google-cloud-cli-firestore-emulator"; ` +
	`install Java with "apt-get install default-jre-headless". If the emulator lives ` +
	`elsewhere, set TALLY_FIRESTORE_EMULATOR to its cloud_firestore_emulator script, ` +
	`its jar, or its folder.`

// LocateEnv is Locate with the hints a user can set: TALLY_FIRESTORE_EMULATOR
// (the emulator's script, jar or folder) and JAVA, read through getenv.
func LocateEnv(getenv func(string) string) (Paths, error) {
	return Locate(getenv("TALLY_FIRESTORE_EMULATOR"), getenv("JAVA"))
}

// Paths are the programs Start runs.
type Paths struct {
	Java string
	Jar  string
}

// Locate finds Java and the emulator jar. hint, if set, names the emulator's
// script, jar or folder; java, if set, names the Java binary.
func Locate(hint, java string) (Paths, error) {
	if java == "" {
		java = "java"
	}
	javaPath, javaErr := exec.LookPath(java)
	var tried []string
	jar := ""
	for _, dir := range candidates(hint) {
		tried = append(tried, dir)
		if p := filepath.Join(dir, jarName); isFile(p) {
			jar = p
			break
		}
	}
	var missing []string
	if jar == "" {
		missing = append(missing, fmt.Sprintf("the Firestore emulator (%s, looked in %s)", jarName, strings.Join(tried, ", ")))
	}
	if javaErr != nil {
		missing = append(missing, fmt.Sprintf("Java (%q not on PATH)", java))
	}
	if len(missing) > 0 {
		return Paths{}, fmt.Errorf("emulator: cannot find %s.\n%s", strings.Join(missing, " or "), InstallHelp)
	}
	return Paths{Java: javaPath, Jar: jar}, nil
}

// candidates lists folders that may hold the jar, most specific first.
func candidates(hint string) []string {
	var dirs []string
	if hint != "" {
		if isFile(hint) {
			hint = filepath.Dir(hint)
		}
		return []string{hint}
	}
	if root := os.Getenv("CLOUDSDK_ROOT_DIR"); root != "" {
		dirs = append(dirs, filepath.Join(root, subdir))
	}
	if gcloud, err := exec.LookPath("gcloud"); err == nil {
		if real, err := filepath.EvalSymlinks(gcloud); err == nil {
			dirs = append(dirs, filepath.Join(filepath.Dir(filepath.Dir(real)), subdir))
		}
	}
	for _, root := range []string{"/usr/lib/google-cloud-sdk", "/usr/share/google-cloud-sdk", "/opt/google-cloud-sdk", "/snap/google-cloud-cli/current"} {
		dirs = append(dirs, filepath.Join(root, subdir))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "google-cloud-sdk", subdir))
	}
	return dirs
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
