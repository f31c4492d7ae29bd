# Creates .\.venv and installs sdlc-hub with its test extras (Windows PowerShell).
$ErrorActionPreference = 'Stop'
Set-Location (Join-Path $PSScriptRoot '..')
$python = if ($env:PYTHON) { $env:PYTHON } else { 'py' }
$pyArgs = if ($python -eq 'py') { @('-3') } else { @() }
if (-not (Test-Path '.venv\Scripts\python.exe')) {
    & $python @pyArgs -m venv .venv
    if ($LASTEXITCODE -ne 0) { throw 'sdlc-hub needs Python 3.11 or newer (py -3 or $env:PYTHON)' }
}
$stamp = '.venv\.sdlc-hub-installed'
$want = (Get-FileHash setup.cfg).Hash + (Get-FileHash pyproject.toml).Hash
if (-not (Test-Path $stamp) -or (Get-Content $stamp) -ne $want) {
    & .venv\Scripts\python.exe -m pip install --quiet --upgrade pip
    & .venv\Scripts\python.exe -m pip install --quiet -e '.[test]'
    if ($LASTEXITCODE -ne 0) { throw 'pip install failed' }
    Set-Content $stamp $want
}
