// Builds ../plotly-atlas.min.js from plotly.js 3.7.0 as plotly.js's own dist files are built (its
// esbuild-config.js: an IIFE named Plotly, CSS inlined, shaders minified, target es2016),
// with index.js as the entry: core (scatter), scattergl and bar. As plotly.js's release build does,
// the attributes' documentation (description, hrName, requiredOpts, otherOpts) is left out: only
// `Plotly.PlotSchema` reads it. Run: npm ci && npm run build (see ../README.md).
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const { environmentPlugin } = require('esbuild-plugin-environment');
const { glsl } = require('esbuild-plugin-glsl');

const version = require('plotly.js/package.json').version;
if (version !== '3.7.0') throw new Error(`plotly.js ${version} installed, 3.7.0 expected: run npm ci`);

// A documentation property and its value (strings and names joined by +, or an array of them joined
// with .join, comments between; an array for requiredOpts and otherOpts), with the space before and the
// comma after. A value built any other way is kept.
const str = String.raw`(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[A-Za-z_$][\w$.]*(?![\w$.]))`;
const sum = String.raw`${str}(?:\s*\+\s*${str})*`;
const joined = String.raw`\[(?:\s|,|\+|\/\/[^\n]*|${str})*\]\.join\(\s*${str}\s*\)`;
const end = String.raw`(?:\s*,|(?=\s*\}))`; // the whole value, no more: its comma, or the object's end
const dropped = [
    new RegExp(String.raw`\s*\b(?:description|hrName): (?:${joined}|${sum})${end}`, 'g'),
    new RegExp(String.raw`\s*\b(?:requiredOpts|otherOpts): \[[^\]]*\]${end}`, 'g'),
];
const withoutDocs = {
    name: 'without-attribute-docs',
    setup(b) {
        b.onLoad({ filter: /[\\/]plotly\.js[\\/]src[\\/].*\.js$/ }, async (args) => {
            let code = await readFile(args.path, 'utf8');
            for (const pattern of dropped) code = code.replace(pattern, '');
            return { contents: code, loader: 'js' };
        });
    },
};

// CSS as a script that adds it to the page once (maplibre-gl's, which plotly.js's registry requires), as
// plotly.js's build does with esbuild-plugin-inline-css, but the style's id is the hash of the file's
// path inside this folder, not on this machine: the same bundle from any checkout.
const here = path.dirname(new URL(import.meta.url).pathname);
const inlineCss = {
    name: 'inline-css',
    setup(b) {
        b.onLoad({ filter: /\.css$/ }, async (args) => {
            const css = await readFile(args.path, 'utf8');
            const id = JSON.stringify(createHash('sha256').update(path.relative(here, args.path).split(path.sep).join('/')).digest('hex'));
            const contents = `(function(){if(!document.getElementById(${id})){var e=document.createElement('style');e.id=${id};e.textContent=${JSON.stringify(css)};document.head.appendChild(e);}})();`;
            return { contents, loader: 'js' };
        });
    },
};

const out = new URL('../plotly-atlas.min.js', import.meta.url);
const result = await build({
    entryPoints: ['index.js'],
    format: 'iife',
    globalName: 'Plotly',
    bundle: true,
    minify: true,
    sourcemap: false,
    write: false,
    legalComments: 'eof',
    plugins: [inlineCss, glsl({ minify: true }), environmentPlugin({ NODE_DEBUG: false }), withoutDocs],
    alias: { stream: 'stream-browserify' },
    define: { global: 'window', 'define.amd': 'false' },
    target: 'es2016',
    logLevel: 'warning',
});
const header = `/**
* plotly.js (scatter, scattergl, bar - minified) v${version}
* Copyright 2012-2026, Plotly, Inc.
* All rights reserved.
* Licensed under the MIT license
* Built for Abstract Atlas by assets/plotly/build (build.mjs)
*/
`;
const bundle = header + result.outputFiles[0].text + 'window.Plotly = Plotly;\n';
await writeFile(out, bundle);
console.log(`${out.pathname}: ${Buffer.byteLength(bundle)} bytes`);
