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
