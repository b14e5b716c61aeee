# SPDX-License-Identifier: Apache-2.0
# Sourced by the set-up scripts: prints the Debian mirror that apt on this
# machine is already configured with (deb822 .sources or one-line .list
# entries): the first URI that ends in /debian. QRITA_DEBIAN_MIRROR
# overrides it. Prints nothing if there is none.
debian_mirror() {
  if [ -n "${QRITA_DEBIAN_MIRROR:-}" ]; then echo "$QRITA_DEBIAN_MIRROR"; return; fi
  {
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
      awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }'
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ } print $i }'
  } | grep -E '^https?://.*/debian/?$' | head -n1 || true
}
