#!/usr/bin/env bash
# The Debian package end to end (packaging/README.md): `cpack -G DEB` in the build
# directory, then what the .deb holds, its Depends, the desktop entry and AppStream
# metadata as validators see them, and the packaged kcx running from an extracted copy.
# Usage: package_test.sh BUILD_DIR WORK_DIR
set -uo pipefail
build=$1
work=$2

fail() { echo "package test: FAIL: $*" >&2; exit 1; }
ok() { echo "package test: ok: $*"; }

app_id=io.github.kcx.kcx
rm -rf "$work" && mkdir -p "$work/out" "$work/root" || fail "cannot create $work"
[ -f "$build/CPackConfig.cmake" ] || fail "$build/CPackConfig.cmake is missing (configure first)"
[ -x "$build/kcx" ] || fail "$build/kcx is missing (build kcx first)"

# 1. cpack builds the package.
if ! (cd "$build" && cpack --config CPackConfig.cmake -G DEB -B "$work/out") >"$work/cpack.log" 2>&1; then
  cat "$work/cpack.log" >&2
  fail "cpack -G DEB failed (log above)"
fi
shopt -s nullglob
debs=("$work"/out/*.deb)
[ ${#debs[@]} -eq 1 ] || fail "expected one .deb in $work/out, found ${#debs[@]}"
deb=${debs[0]}
arch=$(dpkg --print-architecture)
[ "$(basename "$deb")" = "kcx_0.1.0_${arch}.deb" ] || fail "package file is $(basename "$deb"), expected kcx_0.1.0_${arch}.deb"
ok "cpack built $(basename "$deb") ($(stat -c %s "$deb") bytes)"

# 2. Its contents: the executable, desktop integration and docs, and nothing else in bin.
dpkg-deb -c "$deb" >"$work/contents.txt" || fail "dpkg-deb -c cannot read $deb"
for f in ./usr/bin/kcx \
         ./usr/share/applications/$app_id.desktop \
         ./usr/share/metainfo/$app_id.metainfo.xml \
         ./usr/share/icons/hicolor/scalable/apps/kcx.svg \
         ./usr/share/mime/packages/kcx.xml \
         ./usr/share/doc/kcx/README.md; do
  grep -q " $f\$" "$work/contents.txt" || fail "the package lacks $f (dpkg-deb -c: $work/contents.txt)"
done
grep -q -- '-rwxr-xr-x .* ./usr/bin/kcx$' "$work/contents.txt" || fail "./usr/bin/kcx is not mode 0755"
extra=$(awk '{print $NF}' "$work/contents.txt" | grep -E '^\./usr/bin/.|/(test_|bench_)|\.a$|/include/' | grep -v '^\./usr/bin/kcx$' || true)
[ -z "$extra" ] || fail "the package holds files it should not: $extra"
ok "contents: kcx, desktop entry, metainfo, icon, MIME types, docs; no tests or benchmarks"

# 3. Control fields: Depends from dpkg-shlibdeps names Qt 6 and libsodium.
[ "$(dpkg-deb -f "$deb" Package)" = kcx ] || fail "Package is not kcx"
[ "$(dpkg-deb -f "$deb" Version)" = 0.1.0 ] || fail "Version is not 0.1.0"
[ "$(dpkg-deb -f "$deb" Section)" = science ] || fail "Section is not science"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libqt6core6 libqt6gui6 libqt6widgets6 libqt6charts6 libqt6svg6 libsodium; do
  grep -q "$lib" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
ok "Depends: $depends"

# 4. Desktop entry, AppStream metadata and MIME types, as the validators see them.
dpkg-deb -x "$deb" "$work/root" || fail "dpkg-deb -x failed"
root=$work/root
if command -v desktop-file-validate >/dev/null; then
  out=$(desktop-file-validate "$root/usr/share/applications/$app_id.desktop" 2>&1) ||
    fail "desktop-file-validate: $out"
  ok "desktop-file-validate"
else
  echo "package test: skipped desktop-file-validate (desktop-file-utils not installed)"
fi
if command -v appstreamcli >/dev/null; then
  out=$(appstreamcli validate --no-net "$root/usr/share/metainfo/$app_id.metainfo.xml" 2>&1) ||
    fail "appstreamcli validate: $out"
  ok "appstreamcli validate"
else
  echo "package test: skipped appstreamcli validate (appstream not installed)"
fi
grep -q "^Exec=kcx open %F$" "$root/usr/share/applications/$app_id.desktop" || fail "the desktop entry's Exec is not 'kcx open %F'"
grep -q "<launchable type=\"desktop-id\">$app_id.desktop</launchable>" "$root/usr/share/metainfo/$app_id.metainfo.xml" ||
  fail "the metainfo's launchable is not $app_id.desktop"
if command -v update-mime-database >/dev/null; then
  mkdir -p "$work/mime/packages" && cp "$root/usr/share/mime/packages/kcx.xml" "$work/mime/packages/"
  update-mime-database "$work/mime" >"$work/mime.log" 2>&1 || fail "update-mime-database: $(cat "$work/mime.log")"
  for g in 'application/x-safetensors:\*\.safetensors' 'application/x-ndjson:\*\.jsonl' 'application/x-kcx-contract:\*\.kcx\.yaml'; do
    grep -q "$g" "$work/mime/globs2" || fail "the MIME database built from kcx.xml lacks $g"
  done
  ok "update-mime-database"
fi

# 5. The packaged executable runs (its libraries are the system's).
version=$(QT_QPA_PLATFORM=offscreen "$root/usr/bin/kcx" --version 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "extracted usr/bin/kcx --version exited $rc: $version"
[ "$version" = "kcx 0.1.0" ] || fail "extracted usr/bin/kcx --version printed '$version', expected 'kcx 0.1.0'"
ok "extracted usr/bin/kcx --version: $version"
echo "package test: all checks passed"
