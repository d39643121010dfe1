// Which rows of a long list are on screen: pure arithmetic on the scroll position, the
// list's size and one row's height, so that only those rows are in the DOM.
//
// A browser lays out an element at most about 33 million pixels tall; past MAX_HEIGHT the
// list's height is scaled down and the rows on screen are found from the scroll position's
// fraction of the whole, so that scrolling to the end still shows the last row.

export const MAX_HEIGHT = 15_000_000;

/**
 * The height the list takes in the page.
 * @param {number} total rows @param {number} rowHeight pixels
 */
export function listHeight(total, rowHeight) {
    return Math.min(total * rowHeight, MAX_HEIGHT);
}

/**
 * The rows to render and where the first goes.
 * @param {{total: number, rowHeight: number, scrolled: number, viewport: number, overscan?: number}} view
 *   `scrolled`: pixels of the list above the viewport's top (negative when the list starts
 *   below it); `viewport`: the viewport's height.
 * @returns {{first: number, last: number, top: number}} rows `first` to `last` (inclusive;
 *   `last < first` when none), the first row's offset from the list's top.
 */
export function visibleRows({ total, rowHeight, scrolled, viewport, overscan = 4 }) {
    if (total <= 0 || rowHeight <= 0) return { first: 0, last: -1, top: 0 };
    const height = listHeight(total, rowHeight);
    const fits = Math.ceil(viewport / rowHeight) + 1;
    const clamped = Math.max(0, Math.min(scrolled, height));
    let start;
    if (height === total * rowHeight) {
        start = Math.floor(clamped / rowHeight);
    } else {
        // Scaled: the fraction scrolled picks the first row; rows stay rowHeight tall.
        const room = Math.max(1, height - viewport);
        start = Math.floor((Math.min(clamped, room) / room) * Math.max(0, total - fits + 1));
    }
    const first = Math.max(0, start - overscan);
    const last = Math.min(total - 1, start + fits + overscan);
    const top = height === total * rowHeight ? first * rowHeight : clamped - (start - first) * rowHeight;
    return { first, last, top: Math.max(0, Math.min(top, height - (last - first + 1) * rowHeight)) };
}

/** The pages of `size` rows that hold rows `first` to `last`. */
export function pagesFor(first, last, size) {
    const pages = [];
    if (last < first) return pages;
    for (let page = Math.floor(first / size); page <= Math.floor(last / size); page += 1) pages.push(page);
    return pages;
}
