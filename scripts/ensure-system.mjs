#!/usr/bin/env node
// Makes sure the system packages `npm test` needs are present: Mesa lavapipe ≥ 25 (Vulkan on the CPU, for Dawn in
// Node; Debian 12's own Mesa 22 gives no adapter) from bookworm-backports, and Debian's Chromium (Playwright's browser;
// never `playwright install`). Installs them when running as root with apt; otherwise prints the exact commands.
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const LVP_ICD = '/usr/share/vulkan/icd.d/lvp_icd.json';
const CHROMIUM = '/usr/bin/chromium';
const INSTALL = [
  'awk \'BEGIN{RS="";ORS="\\n"} NR==1\' /etc/apt/sources.list.d/debian.sources | sed \'s/^Suites:.*/Suites: bookworm-backports/\' > /etc/apt/sources.list.d/backports.sources',
  'apt-get update',
  'DEBIAN_FRONTEND=noninteractive apt-get install -y -t bookworm-backports mesa-vulkan-drivers',
  'DEBIAN_FRONTEND=noninteractive apt-get install -y chromium',
];

function mesaMajor() {
  try {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own ${Version} format, not a JS template
    const v = execSync("dpkg-query -W -f='${Version}' mesa-vulkan-drivers", {
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString();
    return Number.parseInt(v.replace(/^\d+:/, ''), 10);
  } catch {
    return 0;
  }
}

function missing() {
  const m = [];
  if (!existsSync(LVP_ICD) || mesaMajor() < 25)
    m.push('Mesa lavapipe >= 25 (mesa-vulkan-drivers from bookworm-backports)');
  if (!existsSync(CHROMIUM)) m.push('Debian chromium (/usr/bin/chromium)');
  return m;
}

let need = missing();
if (need.length === 0) process.exit(0);
const canInstall =
  process.getuid?.() === 0 && existsSync('/usr/bin/apt-get') && existsSync('/etc/apt/sources.list.d/debian.sources');
if (canInstall) {
  console.log(`[ensure-system] installing: ${need.join(', ')}`);
  for (const cmd of INSTALL) {
    console.log(`[ensure-system] $ ${cmd}`);
    execSync(cmd, { stdio: 'inherit', shell: '/bin/bash' });
  }
  need = missing();
  if (need.length === 0) process.exit(0);
}
console.error(`npm test needs system packages that are missing: ${need.join(', ')}.`);
console.error('Run these commands as root, then run npm test again:');
for (const cmd of INSTALL) console.error(`  ${cmd}`);
process.exit(1);
