# Bootstraps the virtualenv and runs the whole test suite, slow and browser tests included
# (Windows PowerShell; plain `pytest` runs the fast part only). Extra arguments go to pytest.
$ErrorActionPreference = 'Stop'
& (Join-Path $PSScriptRoot 'bootstrap.ps1')
Set-Location (Join-Path $PSScriptRoot '..')
& .venv\Scripts\python.exe -m pytest -m 'slow or not slow' @args
exit $LASTEXITCODE
