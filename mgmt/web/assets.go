package web

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
)

// style is the UI's only style sheet, inline: the UI loads no external
// assets. Pages carry no style attributes, so the policy below can allow
// this one element by its hash instead of 'unsafe-inline'.
const style = `
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,sans-serif;color:#1d2430;background:#f2f4f7}
header{background:#1f3b57;color:#fff;padding:.5em 1em;display:flex;flex-wrap:wrap;align-items:center;gap:.2em 1em}
header b{font-size:1.2em;margin-right:1em}
header a,header button{color:#dfe8f2;text-decoration:none;background:none;border:0;font:inherit;cursor:pointer;padding:0;margin:0}
header a:hover,header button:hover{color:#fff;text-decoration:underline}
header form{margin:0 0 0 auto}
main{max-width:70em;margin:0 auto;padding:1em;display:grid;grid-template-columns:repeat(auto-fit,minmax(20em,1fr));gap:1em}
section{background:#fff;border:1px solid #d5dbe3;border-radius:6px;padding:.6em 1em;min-width:0;overflow-x:auto}
section.wide{grid-column:1/-1}
h2{font-size:1.05em;margin:.2em 0 .5em;color:#1f3b57}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.2em .6em .2em 0;border-bottom:1px solid #eef0f3;vertical-align:top;white-space:nowrap}
th{font-weight:600;color:#556}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.up{color:#17823b}.down{color:#b42318}.muted{color:#778}
svg.g{width:8em;height:2em;background:#f7f9fb;border:1px solid #e3e7ec}
svg.g polyline{fill:none;stroke-width:1.2}
.rx{stroke:#1f77b4;color:#1f77b4}.tx{stroke:#e1812c;color:#e1812c}
pre{margin:0;font:12px/1.35 ui-monospace,monospace;white-space:pre-wrap;word-break:break-all;max-height:22em;overflow-y:auto}
label{display:block;margin:.5em 0 .1em;font-weight:600}
input,select,textarea{font:inherit;padding:.3em;border:1px solid #b8c1cc;border-radius:4px;width:100%;max-width:28em}
textarea{height:6em}
main form small{display:block}
main section>form>button{display:block}
button{font:inherit;padding:.35em 1em;margin-top:.8em;border:0;border-radius:4px;background:#1f5f99;color:#fff;cursor:pointer}
button.danger{background:#b42318}
td form button{margin:0;padding:.1em .6em}
.err{background:#fdecea;border:1px solid #f5b5ae;color:#8a1c12;padding:.5em;border-radius:4px}
.ok{background:#e8f6ec;border:1px solid #a6d9b5;color:#145c2c;padding:.5em;border-radius:4px}
`

// script keeps the overview live: every 2 s it fetches /status.json,
// updates the numbers and draws each port's receive and transmit rate
// (the last 60 samples, two minutes, kept in the browser) as SVG
// polylines. Plain JavaScript, no framework; the page works without it.
const script = `
(function(){
var N=60,W=120,H=30,hist={},prev=null;
function el(id){return document.getElementById(id)}
function set(id,v){var e=el(id);if(e)e.textContent=v}
function bytes(n){var u=['B','KiB','MiB','GiB','TiB'],i=0;while(n>=1024&&i<u.length-1){n/=1024;i++}return (i?n.toFixed(1):String(n))+' '+u[i]}
function dur(ns){var s=Math.floor(ns/1e9),d=Math.floor(s/86400);s-=d*86400;var h=Math.floor(s/3600);s-=h*3600;var m=Math.floor(s/60);s-=m*60;return (d?d+'d ':'')+h+'h '+m+'m '+s+'s'}
function draw(id,a,max){var e=el(id);if(!e)return;var p=[];for(var i=0;i<a.length;i++){p.push((W-(a.length-1-i)*W/(N-1)).toFixed(1)+','+(H-1-(max>0?a[i]/max*(H-2):0)).toFixed(1))}e.setAttribute('points',p.join(' '))}
function update(st){
var o=st.overview,now=Date.now(),s=o.system;
set('uptime',dur(s.uptime_ns));set('busy',Math.round(s.busy*100)+' %');
set('memused',bytes(s.mem_used));set('memfree',bytes(s.mem_free));set('goroutines',String(s.goroutines));
(o.ports||[]).forEach(function(p,i){
var l=el('link'+i);if(l){l.textContent=p.link?'up '+p.speed_mbps+' Mbit/s':'down';l.className=p.link?'up':'down'}
set('rxb'+i,bytes(p.rx_bytes));set('txb'+i,bytes(p.tx_bytes));set('rxp'+i,String(p.rx_packets));set('txp'+i,String(p.tx_packets));
var h=hist[p.name]||(hist[p.name]={rx:[],tx:[]});
if(prev&&prev.ports[p.name]){var q=prev.ports[p.name],dt=(now-prev.t)/1000;if(dt>0){
h.rx.push(Math.max(0,(p.rx_bytes-q.rx)/dt));h.tx.push(Math.max(0,(p.tx_bytes-q.tx)/dt));
if(h.rx.length>N){h.rx.shift();h.tx.shift()}}}
var max=Math.max.apply(null,h.rx.concat(h.tx,[1]));
draw('grx'+i,h.rx,max);draw('gtx'+i,h.tx,max);
if(h.rx.length)set('rate'+i,bytes(Math.round(h.rx[h.rx.length-1]))+'/s in, '+bytes(Math.round(h.tx[h.tx.length-1]))+'/s out');
});
var pp={};(o.ports||[]).forEach(function(p){pp[p.name]={rx:p.rx_bytes,tx:p.tx_bytes}});prev={t:now,ports:pp};
set('live','live');
}
function tick(){fetch('/status.json',{cache:'no-store',credentials:'same-origin'}).then(function(r){if(!r.ok)throw new Error('status '+r.status);return r.json()}).then(update,function(){set('live','offline')})}
tick();setInterval(tick,2000);
})();
`

// contentSecurityPolicy allows the page's own inline script and style by
// their hashes (CSP Level 2, "hash-source"), fetches to the router
// itself, forms posted to the router itself, and nothing else: no
// external assets, no other inline code, no framing.
var contentSecurityPolicy = "default-src 'none'; script-src '" + cspHash(script) + "'; style-src '" + cspHash(style) +
	"'; connect-src 'self'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// cspHash is a CSP hash-source for an inline element's text.
func cspHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// securityHeaders sets the headers every response carries. no-store on
// every page: authenticated pages hold configuration and CSRF tokens, and
// the status numbers are stale a second later anyway.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}
