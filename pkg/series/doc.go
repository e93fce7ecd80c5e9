/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package series reads a git format-patch series and checks the rules the
// project's series must keep to be reviewable upstream: upstream-style
// subjects, and no machine-specific paths or identities in anything a patch
// adds. test/series applies them to patches/; hack/verify.sh checks the
// series' commits themselves (each builds, none undoes another) with git.
package series
