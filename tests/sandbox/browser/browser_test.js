#!/usr/bin/env node
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// The sandbox's pages in a real browser: Debian's chromium, headless, driven by
// puppeteer-core (pinned in package-lock.json, installed by tests/install_deps.sh
// with `npm ci`; nothing is downloaded here), every page checked by axe-core for
// WCAG 2 A/AA violations.
//
//   node browser_test.js --sandbox PATH [--chromium /usr/bin/chromium] [--screenshots DIR]
//
// Starts the sandbox on 127.0.0.1 (port 0), sets a store up through the API,
// logs into the store pages with its key, opens an email from the outbox,
// follows its link to the download page and sees every state of a download
// (ready, being watermarked, limit reached, expired, access revoked, not yet
// released: set up through the API and the sandbox clock, moved from the page),
// clicks a download and finds it counted by the API, and checks that no page
// holds the API key, that another order's link is refused and that injected
// markup stays text. With --screenshots, writes the PNGs of docs/sandbox.md.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const sandboxExe = arg('--sandbox');
const chromium = arg('--chromium', '/usr/bin/chromium');
const shotsDir = arg('--screenshots');
if (!sandboxExe) {
  console.error('usage: browser_test.js --sandbox PATH [--chromium PATH] [--screenshots DIR]');
  process.exit(2);
}
let puppeteer, axeSource;
try {
  puppeteer = require('puppeteer-core');
  axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
} catch (e) {
  console.error(`puppeteer-core or axe-core is not installed: run tests/install_deps.sh (npm ci in ${__dirname})`);
  process.exit(1);
}
if (!fs.existsSync(chromium)) {
  console.error(`${chromium} not found: tests/install_deps.sh installs Debian's chromium`);
  process.exit(1);
}

const KEY = 'browser-test-key';
const HOSTILE = '<script>alert("x")</script> "quoted" \'single\' & שלום عربي';
let failures = 0;
const t0 = Date.now();
function check(ok, what) {
  if (ok) {
    console.log(`ok - ${what}` + (process.env.DD_BROWSER_TIMES ? ` [${((Date.now() - t0) / 1000).toFixed(1)} s]` : ''));
  } else {
    failures++;
    console.log(`not ok - ${what}`);
  }
}

function startSandbox() {
  const args = ['--port', '0', '--api-key', KEY, '--seed-orders', '3', '--no-rate-limit',
                '--download-limit', '1', '--download-days', '30', '--watermark-delay-ms', '60000'];
  const child = spawn(sandboxExe, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr.on('data', () => {});  // the request log
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout });
    rl.once('line', (line) => {
      const m = /^listening on (\S+)/.exec(line);
      if (m) resolve({ child, base: m[1] });
      else reject(new Error(`unexpected first line: ${line}`));
    });
    child.once('exit', (code) => reject(new Error(`sandbox exited (${code})`)));
  });
}

// CPU seconds of this process and every descendant still running (chromium's
// processes, the sandbox), from /proc: for DD_BROWSER_CPU=1, the figure of the
// test's cost (docs/testing.md). Linux only; 0 elsewhere.
function descendantsCpuSeconds() {
  try {
    const ticks = 100;  // USER_HZ on Linux
    const procs = new Map();
    for (const d of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        procs.set(Number(d), { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / ticks });
      } catch (e) { /* gone */ }
    }
    let total = 0;
    for (const p of procs.values()) {
      for (let q = p.ppid; q > 1; q = (procs.get(q) || { ppid: 0 }).ppid) {
        if (q === process.pid) { total += p.cpu; break; }
      }
    }
    const self = process.cpuUsage();
    return total + (self.user + self.system) / 1e6;
  } catch (e) {
    return 0;
  }
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dd-browser-'));
  const { child, base } = await startSandbox();
  let browser;
  try {
    const api = async (method, p, body, key = KEY) => {
      const url = p.startsWith('/sandbox/') ? base + p : `${base}/api/v1/external${p}`;
      const r = await fetch(url, {
        method,
        headers: { 'X-Auth-Token': key, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${text}`);
      return text ? JSON.parse(text) : null;
    };
    const upload = async (name, filename, type, data, watermark) => {
      const made = await api('POST', '/assets', { asset: { type: 'internal', name, filename,
        byte_size: Buffer.byteLength(data), content_type: type, watermark_asset: watermark } });
      const r = await fetch(made.upload.url, { method: 'PUT', headers: made.upload.headers, body: Buffer.from(data) });
      if (r.status !== 200) throw new Error(`upload ${filename}: ${r.status}`);
      return made.asset.id;
    };

    // --- the store, through the API -------------------------------------------------
    const clock0 = Date.parse((await api('GET', '/sandbox/clock')).now);
    const pdf = await upload(`Guide ${HOSTILE}`, 'guide.pdf', 'application/pdf', '%PDF-1.4\n% guide\n', true);
    const zip = await upload(`Bonus ${HOSTILE}`, 'bonus.zip', 'application/zip', 'PK\u0003\u0004 bonus', false);
    const licence = (await api('POST', '/assets', { asset: { type: 'licence', name: 'Key',
      autogenerate_licence_key: true } })).asset.id;
    await api('POST', '/digital_products', { digital_product: { store_product_id: 7500000001111,
      asset_ids: [pdf, zip, licence], custom_message: `Thank you! ${HOSTILE}` } });
    await api('POST', '/digital_products', { digital_product: { store_product_id: 7500000002222,
      asset_ids: [zip], custom_message: `Coming soon. ${HOSTILE}`, preorder_enabled: true,
      preorder_launch_date: new Date(clock0 + 10 * 86400e3).toISOString(),
      preorder_heading: `Preorder ${HOSTILE}`, preorder_description: `Out in ten days. ${HOSTILE}` } });
    const buy = async (product, email) => (await api('POST', '/sandbox/purchases',
      { store_product_id: product, email, customer_name: `Ada ${HOSTILE}` })).order.id;
    const paid = await buy(7500000001111, 'ada@example.com');
    const preorder = await buy(7500000002222, 'bob@example.com');
    const refunded = await buy(7500000001111, 'eve@example.com');
    await api('POST', `/sandbox/orders/${refunded}/refund`);
    const pageUrl = async (id) => (await api('GET', `/sandbox/orders/${id}/download_page`)).download_page_url;

    // --- the browser ------------------------------------------------------------------
    const userDataDir = fs.mkdtempSync(path.join(tmp, 'profile-'));
    browser = await puppeteer.launch({
      executablePath: chromium,
      headless: false,  // --headless is given below, as Debian's chromium documents it
      userDataDir,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
             '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const page = await browser.newPage();
    await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 1 });  // a phone
    const cdp = await page.createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: tmp });

    const pagesChecked = [];
    const audit = async (label) => {
      // axe-core into the page through DevTools (the pages' CSP allows no script).
      await page.evaluate(axeSource);
      const result = await page.evaluate(() => window.axe.run(document, {
        runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] },
      }));
      const v = result.violations.map((x) => `${x.id} (${x.nodes.map((n) => n.target.join(' ')).join(', ')})`);
      check(v.length === 0, `${label}: no WCAG 2 A/AA violation${v.length ? ': ' + v.join('; ') : ''}`);
      const html = await page.content();
      check(!html.includes(KEY), `${label}: the API key is not on the page`);
      check(await page.$$eval('script', (s) => s.length) === 0, `${label}: no script element (injected markup stays text)`);
      check(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
            `${label}: fits a phone's width`);
      pagesChecked.push(label);
    };
    const shot = async (name, fullPage = true) => {
      if (!shotsDir) return;
      fs.mkdirSync(shotsDir, { recursive: true });
      await page.screenshot({ path: path.join(shotsDir, `${name}.png`), fullPage });
    };
    const states = () => page.$$eval('li.file', (li) => li.map((x) => [x.querySelector('.name').textContent,
      x.querySelector('.state').textContent]));
    const stateOf = async (fileStart) => ((await states()).find(([n]) => n.startsWith(fileStart)) || [])[1];

    // Log in: the key once, in a form.
    await page.goto(`${base}/sandbox/ui/`);
    check(page.url().endsWith('/sandbox/ui/login'), 'without a session the store pages ask for the key');
    await audit('login page');
    await page.type('#api_key', KEY);
    await Promise.all([page.waitForNavigation(), page.click('form button[type=submit]')]);
    check(!page.url().includes(KEY), 'the key is not in the URL');
    const cookies = await page.cookies();
    const session = cookies.find((c) => c.name === 'dd_sandbox_session');
    check(session && session.httpOnly && session.sameSite === 'Strict', 'the session cookie is HttpOnly and SameSite=Strict');
    check(await page.evaluate(() => document.cookie) === '', 'no cookie readable by a script');
    await audit('overview');
    await shot('sandbox-overview');

    // The outbox: the delivery email of the paid order, then its link.
    await page.click('a[href="/sandbox/ui/outbox"]');
    await page.waitForSelector('h1');
    await audit('outbox');
    await shot('sandbox-outbox');
    const subjects = await page.$$eval('tbody tr', (rows) => rows.map((r) => r.textContent));
    check(subjects.some((s) => s.includes('ada@example.com')), 'the outbox lists the delivery email');
    const emailLinks = await page.$$eval('tbody tr', (rows) => rows
      .filter((r) => r.textContent.includes('ada@example.com')).map((r) => r.querySelector('a').href));
    await page.goto(emailLinks[0]);
    await audit('email');
    await shot('sandbox-email');
    const paidUrl = await pageUrl(paid);
    const bodyLink = await page.$(`.body a[href="${paidUrl}"]`);
    check(bodyLink !== null, "the email's body links to the order's download page");
    await Promise.all([page.waitForNavigation(), bodyLink.click()]);
    check(page.url() === paidUrl, 'the link opens the download page');

    // Opening it starts watermarking; the zip is ready, the licence key shown.
    check(await stateOf('guide.pdf') === 'Being watermarked', 'state: being watermarked');
    check(await stateOf('bonus.zip') === 'Ready', 'state: ready');
    const keyText = await page.$eval('code.key', (c) => c.textContent);
    const api0 = (await api('GET', `/orders/${paid}/downloads`)).downloads;
    check(keyText === api0[2].licence_key, 'the licence key of the API is on the page');
    check(await page.$eval('p.message', (p) => p.textContent) === `Thank you! ${HOSTILE}`,
          'injected markup, quotes and right-to-left text read back as text');
    await audit('download page (being watermarked)');
    await shot('sandbox-download-page');

    // A download click: a fresh presigned URL, counted by the API.
    const zipLink = await page.$$eval('li.file', (li) => li.filter((x) => x.textContent.includes('bonus.zip'))
      .map((x) => x.querySelector('a.button').href)[0]);
    await page.evaluate((href) => { document.querySelector(`a[href="${href}"]`).click(); }, zipLink);
    let counted = 0;
    for (let i = 0; i < 100 && counted === 0; i++) {
      counted = (await api('GET', `/orders/${paid}/downloads`)).downloads[1].download_count;
      if (counted === 0) await new Promise((r) => setTimeout(r, 50));
    }
    check(counted === 1, 'the clicked download is counted by GET /orders/{id}/downloads');
    await page.reload();
    check(await stateOf('bonus.zip') === 'Download limit reached', 'state: limit reached');

    // The clock, from the page: +1 minute finishes watermarking.
    await page.goto(`${base}/sandbox/ui/`);
    await Promise.all([page.waitForNavigation(), page.click('button[value="60"]')]);
    const clock1 = Date.parse((await api('GET', '/sandbox/clock')).now);
    check(clock1 - clock0 >= 60000, 'the clock moved from the page');
    await page.goto(paidUrl);
    check(await stateOf('guide.pdf') === 'Ready', 'state: ready after watermarking');
    await audit('download page (ready, limit reached)');
    await shot('sandbox-download-states');

    // Not yet released, and access revoked.
    await page.goto(await pageUrl(preorder));
    check(await stateOf('bonus.zip') === 'Not yet released', 'state: not yet released');
    check((await page.$eval('.preorder h3', (h) => h.textContent)) === `Preorder ${HOSTILE}`, 'the preorder heading is shown');
    await audit('download page (preorder)');
    await shot('sandbox-preorder');
    await page.goto(await pageUrl(refunded));
    check(await stateOf('guide.pdf') === 'Access revoked', 'state: access revoked');
    check(await page.$('code.key') === null, 'no licence key once access is revoked');
    await audit('download page (revoked)');

    // Another order's link is refused.
    const token = paidUrl.slice(paidUrl.lastIndexOf('/') + 1);
    const other = await page.goto(`${base}/download-page/${preorder}/${token}`);
    check(other.status() === 404, "another order's link is refused (404)");
    await audit('invalid link page');

    // The clock, by a number of seconds: 31 days on, downloads expire.
    await page.goto(`${base}/sandbox/ui/`);
    await page.type('#advance', String(31 * 86400));
    await Promise.all([page.waitForNavigation(), page.click('#advance ~ button')]);
    await page.goto(paidUrl);
    check(await stateOf('guide.pdf') === 'Expired', 'state: expired');
    await audit('download page (expired)');

    // The store's lists.
    for (const [p, label] of [['/sandbox/ui/assets', 'assets'], ['/sandbox/ui/products', 'digital products'],
                              ['/sandbox/ui/orders', 'orders']]) {
      await page.goto(base + p);
      await audit(label);
      if (label === 'orders') await shot('sandbox-orders', false);  // the first screen
    }
    check(pagesChecked.length >= 13, `axe-core checked ${pagesChecked.length} pages`);
  } finally {
    if (process.env.DD_BROWSER_CPU) console.log(`cpu: ${descendantsCpuSeconds().toFixed(1)} s (this process, chromium, the sandbox)`);
    if (browser) await browser.close();
    child.kill('SIGTERM');
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(() => {
  console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
  process.exit(failures ? 1 : 0);
}, (e) => {
  console.error(e);
  process.exit(1);
});
