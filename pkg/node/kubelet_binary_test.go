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

// TestFeatureGates: upstream's kubelet gets none of the series' gates, the
// patched one always gets EventedVolumeManager's value, then its further
// gates sorted by name; upstream's kubelet refuses to take any.
func TestFeatureGates(t *testing.T) {
	all := map[string]bool{VolumesInUseNodeStatusUpdate: true, RelistOnPodTermination: true}
	for _, tc := range []struct {
		name    string
		opts    Options
		want    string
		wantErr bool
	}{
		{name: "gate off", opts: Options{}, want: "featureGates:\n  EventedVolumeManager: false\n  EventedPLEG: false\n"},
		{name: "gate on, EventedPLEG", opts: Options{Gate: true, EventedPLEG: true}, want: "featureGates:\n  EventedVolumeManager: true\n  EventedPLEG: true\n"},
		{name: "stock", opts: Options{StockKubelet: true}, want: "featureGates:\n  EventedPLEG: false\n"},
		{name: "all gates, sorted", opts: Options{Gate: true, Gates: all},
			want: "featureGates:\n  EventedVolumeManager: true\n  RelistOnPodTermination: true\n  VolumesInUseNodeStatusUpdate: true\n  EventedPLEG: false\n"},
		{name: "a further gate alone, one off", opts: Options{Gates: map[string]bool{VolumesInUseNodeStatusUpdate: true, RelistOnPodTermination: false}},
			want: "featureGates:\n  EventedVolumeManager: false\n  RelistOnPodTermination: false\n  VolumesInUseNodeStatusUpdate: true\n  EventedPLEG: false\n"},
		{name: "stock with the gate", opts: Options{StockKubelet: true, Gate: true}, wantErr: true},
		{name: "stock with further gates", opts: Options{StockKubelet: true, Gates: map[string]bool{RelistOnPodTermination: false}}, wantErr: true},
		{name: "EventedPLEG among the further gates", opts: Options{Gates: map[string]bool{"EventedPLEG": true}}, wantErr: true},
		{name: "EventedVolumeManager among the further gates", opts: Options{Gates: map[string]bool{"EventedVolumeManager": true}}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkGates(tc.opts); (err != nil) != tc.wantErr {
				t.Fatalf("checkGates() = %v, want an error: %t", err, tc.wantErr)
			}
			if got := featureGates(tc.opts); !tc.wantErr && got != tc.want {
				t.Errorf("featureGates() = %q, want %q", got, tc.want)
			}
		})
	}
}
