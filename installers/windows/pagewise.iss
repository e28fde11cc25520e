; Inno Setup script for Pagewise on Windows — UNTESTED HERE (written on Linux; no Windows machine to
; build or run it). Build steps (on Windows, from the repo root, in a venv with the [build] extra and a
; llama-cpp-python built with CMAKE_ARGS="-DGGML_NATIVE=OFF"):
;   pyinstaller --noconfirm installers\pagewise.spec        → dist\Pagewise\Pagewise.exe
;   iscc installers\windows\pagewise.iss                    → dist\Pagewise-0.1.0-setup.exe
; Installs per user (no admin), adds a Start menu entry and "Open with → Pagewise" for .pdf files
; (it does not take over the default PDF application).

#define AppName "Pagewise"
#define AppVersion "0.1.0"
#define SrcDir "..\..\dist\Pagewise"

[Setup]
AppId={{6B0E6A52-3C1D-4E0B-9F5C-2E7A0D9B7F11}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=Pagewise
DefaultDirName={localappdata}\Programs\{#AppName}
DefaultGroupName={#AppName}
PrivilegesRequired=lowest
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist
OutputBaseFilename=Pagewise-{#AppVersion}-setup
SetupIconFile=..\..\resources\icons\pagewise.ico
UninstallDisplayIcon={app}\Pagewise.exe
Compression=lzma2
SolidCompression=yes
WizardStyle=modern
ChangesAssociations=yes

[Files]
Source: "{#SrcDir}\*"; DestDir: "{app}"; Flags: recursesubdirs createallsubdirs ignoreversion

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\Pagewise.exe"; Parameters: "gui"
Name: "{userdesktop}\{#AppName}"; Filename: "{app}\Pagewise.exe"; Parameters: "gui"; Tasks: desktopicon

[Tasks]
Name: "desktopicon"; Description: "Create a desktop icon"; Flags: unchecked

[Registry]
; "Open with" for PDFs, per user
Root: HKCU; Subkey: "Software\Classes\Pagewise.PDF"; ValueType: string; ValueData: "PDF document (Pagewise)"; Flags: uninsdeletekey
Root: HKCU; Subkey: "Software\Classes\Pagewise.PDF\DefaultIcon"; ValueType: string; ValueData: "{app}\Pagewise.exe,0"
Root: HKCU; Subkey: "Software\Classes\Pagewise.PDF\shell\open\command"; ValueType: string; ValueData: """{app}\Pagewise.exe"" gui ""%1"""
Root: HKCU; Subkey: "Software\Classes\.pdf\OpenWithProgids"; ValueType: string; ValueName: "Pagewise.PDF"; ValueData: ""; Flags: uninsdeletevalue
Root: HKCU; Subkey: "Software\Classes\Applications\Pagewise.exe\SupportedTypes"; ValueType: string; ValueName: ".pdf"; ValueData: ""; Flags: uninsdeletekey

[Run]
Filename: "{app}\Pagewise.exe"; Parameters: "gui"; Description: "Start Pagewise"; Flags: nowait postinstall skipifsilent
