package node

import (
	"path/filepath"
	"testing"
)

func TestKubeletBinary(t *testing.T) {
	out := t.TempDir()
	tests := []struct {
		name, env, want string
	}{
		{name: "the series' base release", want: filepath.Join(out, "bin", "kubelet")},
		{name: "another release's kubelet", env: "/some/kubelet-v1.37.2", want: "/some/kubelet-v1.37.2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(KubeletEnv, tc.env)
			if got := KubeletBinary(out); got != tc.want {
				t.Errorf("KubeletBinary() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFeatureGates: upstream's kubelet gets no EventedVolumeManager gate, the
// patched one always gets its value.
func TestFeatureGates(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"gate off", Options{}, "featureGates:\n  EventedVolumeManager: false\n  EventedPLEG: false\n"},
		{"gate on, EventedPLEG", Options{Gate: true, EventedPLEG: true}, "featureGates:\n  EventedVolumeManager: true\n  EventedPLEG: true\n"},
		{"stock", Options{StockKubelet: true}, "featureGates:\n  EventedPLEG: false\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := featureGates(tc.opts); got != tc.want {
				t.Errorf("featureGates() = %q, want %q", got, tc.want)
			}
		})
	}
}
