# scripts/need_browser.sh: sourced by the browser tests (test_dashboard.sh,
# test_playground.sh). NeedBrowser NAME: installs Debian's chromium, nodejs and npm with
# apt-get when they are missing and this runs as root, else says what is missing and
# fails; then prints the versions under NAME.
NeedBrowser() {
  local name=$1 need=()
  command -v chromium >/dev/null || need+=(chromium)
  command -v npm >/dev/null || need+=(nodejs npm)
  if ((${#need[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
      echo "$name: needs ${need[*]} (sudo apt-get install ${need[*]})" >&2
      exit 1
    fi
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  echo "$name: $(chromium --version 2>/dev/null | head -1), node $(node --version)"
}
