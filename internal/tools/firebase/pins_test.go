package firebase

import "testing"

func TestNodeMajor(t *testing.T) {
	if got := NodeMajor(); got < 18 {
		t.Fatalf("NodeMajor() = %d: the lockfile's firebase-tools names no engines.node this can read", got)
	}
	for r, want := range map[string]int{
		">=20.0.0 || >=22.0.0 || >=24.0.0": 20,
		">=22":                             22,
		"^18.0.0":                          0,
		"":                                 0,
	} {
		if got := lowestMajor(r); got != want {
			t.Errorf("lowestMajor(%q) = %d, want %d", r, got, want)
		}
	}
}
