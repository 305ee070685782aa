#!/usr/bin/env python3
"""The same fixture pages as benches/parse.rs, read the way Python cricket scrapers read them.

For each page: BeautifulSoup with lxml, selectolax (lexbor) extracting the same fields, and
selectolax's bare parse (HTMLParser(page), no extraction). Pages whose data is embedded JSON are
read the fair Python way: parse the HTML with the library, find the script(s), json.loads, walk
to the matches. Pure JSON APIs have no HTML to parse: they are timed with the stdlib json only.

Prints one JSON object: {case: {"bs4": s, "selectolax": s, "selectolax_parse": s, "json": s,
"matches": n}} with median seconds per page. Usage: extract.py FIXTURES_DIR [SECONDS_PER_CELL] [json]
(`json`: only the pure JSON API pages, for bench/run.sh's alternating rounds).
"""
import json
import statistics
import sys
import time

from bs4 import BeautifulSoup
from selectolax.lexbor import LexborHTMLParser as HTMLParser

CHUNK_OPEN = 'self.__next_f.push([1,"'


# ---------------------------------------------------------------- shared, library-independent


def cricbuzz_from_payload(chunks, hrefs):
    """RSC chunks (script texts) -> one dict per matchId, as cricbuzz.rs reads them."""
    payload = []
    for text in chunks:
        start = text.find("self.__next_f.push(")
        if start < 0 or CHUNK_OPEN not in text:
            continue
        arr = json.loads(text[start + len("self.__next_f.push(") : text.rindex(")")])
        payload.append(arr[1])
    payload = "".join(payload)
    dec = json.JSONDecoder()
    out = {}
    i = payload.find('"matchInfo":')
    while i >= 0:
        try:
            info, _ = dec.raw_decode(payload, i + len('"matchInfo":'))
        except ValueError:
            info = None
        if isinstance(info, dict) and "matchId" in info:
            mid = info["matchId"]
            t1, t2 = info.get("team1") or {}, info.get("team2") or {}
            venue = info.get("venueInfo") or {}
            m = out.setdefault(mid, {})
            for k, v in {
                "id": mid,
                "series": info.get("seriesName"),
                "description": info.get("matchDesc"),
                "format": info.get("matchFormat"),
                "start": info.get("startDate"),
                "state": info.get("state"),
                "status": info.get("status"),
                "team1": t1.get("teamName"),
                "team1_short": t1.get("teamSName"),
                "team2": t2.get("teamName"),
                "team2_short": t2.get("teamSName"),
                "venue": venue.get("ground"),
                "city": venue.get("city"),
                "url": hrefs.get(str(mid)),
            }.items():
                if m.get(k) is None:
                    m[k] = v
        i = payload.find('"matchInfo":', i + 1)
    return list(out.values())


def cricbuzz_hrefs(hrefs):
    out = {}
    for h in hrefs:
        rest = h[len("/live-cricket-scores/") :]
        out.setdefault(rest.split("/", 1)[0], "https://www.cricbuzz.com" + h)
    return out


def espn_walk(root):
    """Every match-shaped object (objectId, two teams, state), one per objectId."""
    out, stack = {}, [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if (
                isinstance(node.get("objectId"), int)
                and isinstance(node.get("teams"), list)
                and len(node["teams"]) == 2
                and isinstance(node.get("state"), str)
            ):
                teams = [(s.get("team") or {}) for s in node["teams"]]
                ground = node.get("ground") or {}
                series = node.get("series") or {}
                out.setdefault(
                    node["objectId"],
                    {
                        "id": node["objectId"],
                        "slug": node.get("slug"),
                        "series": series.get("longName") or series.get("name"),
                        "description": node.get("title"),
                        "format": node.get("format"),
                        "start": node.get("startTime"),
                        "state": node["state"],
                        "status": node.get("statusText"),
                        "teams": [(t.get("longName"), t.get("abbreviation")) for t in teams],
                        "venue": ground.get("longName"),
                        "city": (ground.get("town") or {}).get("name"),
                    },
                )
            stack.extend(v for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))
    return list(out.values())


def cricbuzz_json(page):
    out = []
    for tm in json.loads(page).get("typeMatches", []):
        for sm in tm.get("seriesMatches", []):
            for m in (sm.get("seriesAdWrapper") or {}).get("matches", []):
                info = m.get("matchInfo")
                if info:
                    out.append(
                        {
                            "id": info.get("matchId"),
                            "series": info.get("seriesName"),
                            "description": info.get("matchDesc"),
                            "format": info.get("matchFormat"),
                            "start": info.get("startDate"),
                            "state": info.get("state"),
                            "team1": (info.get("team1") or {}).get("teamName"),
                            "team2": (info.get("team2") or {}).get("teamName"),
                            "venue": (info.get("venueInfo") or {}).get("ground"),
                        }
                    )
    return out


def cricketdata(page):
    return [
        {
            "id": m.get("id"),
            "name": m.get("name"),
            "type": m.get("matchType"),
            "status": m.get("status"),
            "venue": m.get("venue"),
            "start": m.get("dateTimeGMT"),
            "teams": m.get("teams"),
            "started": m.get("matchStarted"),
            "ended": m.get("matchEnded"),
        }
        for m in json.loads(page).get("data", [])
    ]


def between(s, after=None, before=None, after_last=None, before_last=None):
    if s is None:
        return None
    if after is not None:
        s = s.split(after, 1)[1] if after in s else None
    if s is not None and after_last is not None:
        s = s.rsplit(after_last, 1)[1] if after_last in s else None
    if s is not None and before is not None:
        s = s.split(before, 1)[0]
    if s is not None and before_last is not None:
        s = s.rsplit(before_last, 1)[0]
    return s.strip() if s is not None else None


def cricbuzz_2018_card(href, title, text):
    if not href or "/live-cricket-scores/" not in href:
        return None
    teams = between(title, before=",").split(" v ")
    return {
        "id": between(href, after="/live-cricket-scores/", before="/"),
        "teams": teams,
        "team1_short": between(text, before=" vs "),
        "team2_short": between(text, after=" vs ", before_last=" - "),
        "description": between(title, after=",", before_last=" - "),
        "state": between(title, after_last=" - "),
        "url": "https://www.cricbuzz.com" + href,
    }


def espn_2020_card(href, home, away, home_abbr, away_abbr, overview, notes, classes):
    if not href:
        return None
    state = next((c for c in (classes or "").split() if c.startswith("cscore--")), None)
    return {
        "id": between(href, after="/game/", before="/"),
        "teams": [home, away],
        "short": [home_abbr, away_abbr],
        "description": between(overview, before=","),
        "series": between(overview, after=", ", before=" at "),
        "venue": between(overview, after=" at ", before=","),
        "status": notes,
        "state": state,
        "url": "https://www.espncricinfo.com" + href,
    }


def dedupe(cards):
    seen, out = set(), []
    for c in cards:
        if c and c["id"] not in seen:
            seen.add(c["id"])
            out.append(c)
    return out


# ---------------------------------------------------------------- BeautifulSoup + lxml


def bs4_text(node, sel):
    found = node.select_one(sel)
    return found.get_text(strip=True) if found else None


def bs4_extract(case, page):
    if case == "espn-rss":
        soup = BeautifulSoup(page, "xml")
        return [
            {
                "title": i.title.get_text(strip=True) if i.title else None,
                "guid": i.guid.get_text(strip=True) if i.guid else None,
                "link": i.link.get_text(strip=True) if i.link else None,
                "description": i.description.get_text(strip=True) if i.description else None,
            }
            for i in soup.find_all("item")
        ]
    soup = BeautifulSoup(page, "lxml")
    if case == "cricbuzz":
        chunks = [s.string or "" for s in soup.find_all("script")]
        hrefs = [a["href"] for a in soup.select('a[href^="/live-cricket-scores/"]')]
        return cricbuzz_from_payload(chunks, cricbuzz_hrefs(hrefs))
    if case.startswith("espncricinfo"):
        script = soup.find("script", id="__NEXT_DATA__")
        return espn_walk(json.loads(script.string))
    if case == "css-cricbuzz-2018":
        return dedupe(
            cricbuzz_2018_card(a.get("href"), a.get("title"), a.get_text(strip=True))
            for a in soup.select("nav.cb-mat-mnu > a.cb-mat-mnu-itm, li.cb-lst-mtch div.cb-mtch-all > a")
        )
    if case == "css-espncricinfo-2020":
        cards = []
        for card in soup.select("div.gameHeader"):
            link = card.select_one("a.game")
            score = card.select_one("div.cscore")
            cards.append(
                espn_2020_card(
                    link.get("href") if link else None,
                    bs4_text(card, ".cscore_item--home .cscore_name--long"),
                    bs4_text(card, ".cscore_item--away .cscore_name--long"),
                    bs4_text(card, ".cscore_item--home .cscore_name--abbrev"),
                    bs4_text(card, ".cscore_item--away .cscore_name--abbrev"),
                    bs4_text(card, ".cscore_info-overview"),
                    bs4_text(card, ".cscore_notes_game"),
                    " ".join(score.get("class", [])) if score else None,
                )
            )
        return dedupe(cards)
    raise KeyError(case)


# ---------------------------------------------------------------- selectolax (lexbor)


def lx_text(node, sel):
    found = node.css_first(sel)
    return found.text(strip=True) if found else None


def selectolax_extract(case, page):
    tree = HTMLParser(page)
    if case == "espn-rss":
        # An HTML parser: <link> is a void element there, so the link text is lost; the match
        # id is in <guid>, which survives.
        return [
            {
                "title": lx_text(i, "title"),
                "guid": lx_text(i, "guid"),
                "description": lx_text(i, "description"),
            }
            for i in tree.css("item")
        ]
    if case == "cricbuzz":
        chunks = [s.text(deep=True) for s in tree.css("script")]
        hrefs = [a.attributes.get("href") for a in tree.css('a[href^="/live-cricket-scores/"]')]
        return cricbuzz_from_payload(chunks, cricbuzz_hrefs(hrefs))
    if case.startswith("espncricinfo"):
        script = tree.css_first("script#__NEXT_DATA__")
        return espn_walk(json.loads(script.text(deep=True)))
    if case == "css-cricbuzz-2018":
        return dedupe(
            cricbuzz_2018_card(a.attributes.get("href"), a.attributes.get("title"), a.text(strip=True))
            for a in tree.css("nav.cb-mat-mnu > a.cb-mat-mnu-itm, li.cb-lst-mtch div.cb-mtch-all > a")
        )
    if case == "css-espncricinfo-2020":
        cards = []
        for card in tree.css("div.gameHeader"):
            link = card.css_first("a.game")
            score = card.css_first("div.cscore")
            cards.append(
                espn_2020_card(
                    link.attributes.get("href") if link else None,
                    lx_text(card, ".cscore_item--home .cscore_name--long"),
                    lx_text(card, ".cscore_item--away .cscore_name--long"),
                    lx_text(card, ".cscore_item--home .cscore_name--abbrev"),
                    lx_text(card, ".cscore_item--away .cscore_name--abbrev"),
                    lx_text(card, ".cscore_info-overview"),
                    lx_text(card, ".cscore_notes_game"),
                    score.attributes.get("class") if score else None,
                )
            )
        return dedupe(cards)
    raise KeyError(case)


# ---------------------------------------------------------------- timing

# (case, fixture, kind): the same rows as benches/parse.rs.
CASES = [
    ("cricbuzz", "cricbuzz/live-scores_2026-07-17.html", "html"),
    ("cricbuzz-json-live", "cricbuzz/matches-v1-live_2024-06-16.json", "cricbuzz-json"),
    ("cricbuzz-json-upcoming", "cricbuzz/matches-v1-upcoming_2024-06-16.json", "cricbuzz-json"),
    ("espncricinfo-series", "espncricinfo/series-match-results_ipl-2022_2022-07-27.html", "html"),
    ("espncricinfo-match", "espncricinfo/match-page_1478914_2026-02-21_rendered.html", "html"),
    ("espn-rss", "espncricinfo/rss-livescores_2019-01-31.xml", "html"),
    ("cricketdata", "cricketdata/current-matches_2026-05-18.json", "cricketdata"),
    ("css-cricbuzz-2018", "cricbuzz/old-layout_match-page_20082_2018-04-23.html", "html"),
    ("css-espncricinfo-2020", "espncricinfo/old-layout_match-page_1213062_2020-02-07.html", "html"),
]


def median_secs(fn, budget):
    """Median of repeated runs: at least 5, until `budget` seconds are spent (at most 200)."""
    fn()  # warm-up
    runs, spent = [], 0.0
    while len(runs) < 5 or (spent < budget and len(runs) < 200):
        t = time.perf_counter()
        fn()
        d = time.perf_counter() - t
        runs.append(d)
        spent += d
    return statistics.median(runs)


def main():
    root = sys.argv[1]
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    json_only = len(sys.argv) > 3 and sys.argv[3] == "json"
    result = {}
    for case, file, kind in CASES:
        if json_only and kind == "html":
            continue
        with open(f"{root}/{file}", encoding="utf-8") as f:
            page = f.read()
        row = {"bytes": len(page.encode("utf-8"))}
        if kind == "html":
            found = bs4_extract(case, page)
            row["matches"] = len(found)
            row["matches_selectolax"] = len(selectolax_extract(case, page))
            row["bs4"] = median_secs(lambda: bs4_extract(case, page), budget)
            row["selectolax"] = median_secs(lambda: selectolax_extract(case, page), budget)
            row["selectolax_parse"] = median_secs(lambda: HTMLParser(page), budget)
        else:
            fn = cricbuzz_json if kind == "cricbuzz-json" else cricketdata
            row["matches"] = len(fn(page))
            row["json"] = median_secs(lambda: fn(page), budget)
        result[case] = row
        print(f"  {case}: {row}", file=sys.stderr)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
